#include "random_graph.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include "sable/runtime/model_builder.h"

namespace sable::testing {
namespace {

using hal::OperandType;
using hal::OperationType;
using runtime::ModelBuilder;

constexpr auto kU8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kS8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr int32_t kPaddingSame = 1;
constexpr int32_t kPaddingValid = 2;

// Bounds that keep one graph fast on the CPU reference and the simulated NPU while still reaching
// tensors above the s16 scratchpad (256 KiB): 64×64×96 bytes is 384 KiB.
constexpr uint64_t kMaxElements = 64 * 64 * 96;
constexpr uint64_t kMaxMacs = 12'000'000;
constexpr uint32_t kMaxPad = 15;  // the DMA's and POOL's 4-bit padding fields
// The convolution lowering keeps the weights of one block of output channels — input channels ×
// kernel taps scratchpad lines — in the scratchpad with a tile of input; it does not split that
// reduction, so it refuses above about 15 000 lines on s16 (CONV_2D after a RESHAPE to many
// channels, FULLY_CONNECTED flattening a large image). Kept below that here.
constexpr uint64_t kMaxReductionLines = 12 * 1024;

// Quantized values of random data spread about this far from the zero point; used to pick output
// scales under which results neither all saturate nor all collapse to the zero point.
constexpr double kTypicalSpread = 40.0;

// An activation tensor of the graph being built.
struct Tensor {
  uint32_t operand = 0;
  std::vector<uint32_t> dims;
  float scale = 1.0f;
  int32_t zeroPoint = 0;
  bool approximate = false;  // produced through a lookup table: a model output only
};

uint64_t elementCount(const std::vector<uint32_t>& dims) {
  uint64_t n = 1;
  for (uint32_t d : dims) n *= d;
  return n;
}

// NNAPI's output extent of a window over `in` padded by head + tail (0 when no window fits).
uint32_t outExtent(uint32_t in, uint32_t head, uint32_t tail, uint32_t kernel, uint32_t stride, uint32_t dilation) {
  const int64_t window = int64_t{kernel - 1} * dilation + 1;
  const int64_t padded = int64_t{in} + head + tail;
  return padded < window ? 0 : static_cast<uint32_t>((padded - window) / stride + 1);
}

// The graph under construction: the model, the random stream, and the activation tensors
// operations may consume.
class GraphBuilder {
 public:
  explicit GraphBuilder(uint32_t seed) : rng_(seed) { type_ = chance(0.5) ? kU8 : kS8; }

  ModelBuilder& model() { return builder_; }
  OperandType type() const { return type_; }
  bool isSigned() const { return type_ == kS8; }

  // ---- randomness (plain arithmetic on mt19937, so a seed gives the same graph everywhere) ----
  uint32_t uniform(uint32_t lo, uint32_t hi) { return lo + static_cast<uint32_t>(rng_() % (uint64_t{hi} - lo + 1)); }
  bool chance(double p) { return static_cast<double>(rng_()) / 4294967296.0 < p; }
  double logUniform(double lo, double hi) {
    return lo * std::pow(hi / lo, static_cast<double>(rng_()) / 4294967295.0);
  }
  template <typename T>
  const T& pick(const std::vector<T>& values) { return values[uniform(0, static_cast<uint32_t>(values.size() - 1))]; }
  std::vector<uint8_t> randomBytes(uint64_t n) {
    std::vector<uint8_t> bytes(n);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng_());
    return bytes;
  }

  // ---- quantization ----
  float activationScale() { return static_cast<float>(logUniform(1.0 / 512, 0.25)); }
  int32_t zeroPoint() {
    // Mostly near the middle of the range (real activations), sometimes at its low end (after a
    // RELU). Not at the high end: with a fused RELU everything would clamp to it.
    const int32_t offset = isSigned() ? -128 : 0;
    if (chance(0.15)) return offset;
    return offset + static_cast<int32_t>(uniform(64, 192));
  }
  // Filters' zero points sit near the middle of the random filter bytes, as trained weights are
  // centred: a zero point at an end would add a bias of the input's sum that saturates the output.
  int32_t filterZeroPoint() { return (isSigned() ? 0 : 128) + static_cast<int32_t>(uniform(0, 32)) - 16; }
  // A fused activation that keeps several output levels: RELU1 and RELU6 only when the output
  // scale leaves at least 16 steps in their range.
  int32_t fusedActivation(float outputScale) {
    if (chance(0.4)) return 0;
    std::vector<int32_t> codes = {1};
    if (outputScale <= 1.0f / 16) codes.push_back(2);
    if (outputScale <= 6.0f / 16) codes.push_back(3);
    return pick(codes);
  }

  // ---- tensors ----
  // A new model input with random contents.
  Tensor input(std::vector<uint32_t> dims, float scale, int32_t zeroPoint) {
    Tensor t{.operand = builder_.addInput(type_, dims, scale, zeroPoint), .dims = dims, .scale = scale,
             .zeroPoint = zeroPoint};
    inputData_.push_back(randomBytes(elementCount(dims)));
    return t;
  }
  // A constant activation operand (ADD's B from the model's data).
  Tensor constant(std::vector<uint32_t> dims, float scale, int32_t zeroPoint) {
    const uint32_t operand = builder_.addConstant(type_, dims, randomBytes(elementCount(dims)), scale, zeroPoint);
    return Tensor{.operand = operand, .dims = std::move(dims), .scale = scale, .zeroPoint = zeroPoint};
  }
  // The output of an operation: a temporary until finish() decides which tensors are outputs.
  Tensor produce(std::vector<uint32_t> dims, float scale, int32_t zeroPoint, bool approximate = false) {
    Tensor t{.operand = builder_.addTemporary(type_, dims, scale, zeroPoint), .dims = std::move(dims), .scale = scale,
             .zeroPoint = zeroPoint, .approximate = approximate};
    return t;
  }
  uint32_t int32(int64_t value) { return builder_.addInt32(static_cast<int32_t>(value)); }
  uint32_t int32s(const std::vector<int32_t>& values) {
    return builder_.addConstant(OperandType::TENSOR_INT32, {static_cast<uint32_t>(values.size())}, values);
  }

  // Tensors operations may consume: model inputs and operation outputs, in creation order.
  const std::vector<Tensor>& tensors() const { return tensors_; }
  void add(Tensor t) {
    tensors_.push_back(std::move(t));
    consumers_.push_back(0);
    produced_.push_back(!isInput(tensors_.back().operand));
  }
  void consume(const Tensor& t) {
    for (size_t i = 0; i < tensors_.size(); ++i) {
      if (tensors_[i].operand == t.operand) ++consumers_[i];
    }
  }

  // Every operation output nobody consumes becomes a model output, and now and then a consumed one
  // too (a model output that later layers read).
  RandomGraph finish(uint32_t seed) {
    RandomGraph graph;
    graph.seed = seed;
    for (size_t i = 0; i < tensors_.size(); ++i) {
      if (!produced_[i]) continue;
      if (consumers_[i] == 0 || chance(0.1)) {
        builder_.makeOutput(tensors_[i].operand);
        graph.approximateOutputs.push_back(tensors_[i].approximate);
      }
    }
    graph.model = builder_.build();
    graph.inputs = std::move(inputData_);
    return graph;
  }

 private:
  bool isInput(uint32_t operand) {
    const auto& in = builder_.model().main.inputIndexes;
    return std::find(in.begin(), in.end(), operand) != in.end();
  }

  std::mt19937 rng_;
  OperandType type_ = kU8;
  ModelBuilder builder_;
  std::vector<Tensor> tensors_;
  std::vector<uint32_t> consumers_;
  std::vector<bool> produced_;
  std::vector<std::vector<uint8_t>> inputData_;
};

// ---- convolution-like operations ------------------------------------------------------------

// A window's geometry as NNAPI states it: explicit paddings or an implicit scheme.
struct Window {
  uint32_t kernelH = 1, kernelW = 1, strideX = 1, strideY = 1, dilationX = 1, dilationY = 1;
  bool implicit = false;
  int32_t scheme = kPaddingValid;
  uint32_t padLeft = 0, padRight = 0, padTop = 0, padBottom = 0;  // explicit, or what the scheme gives
  uint32_t outH = 0, outW = 0;
};

// NNAPI's SAME padding: out = ⌈in / stride⌉, the odd pixel at the end.
void samePadding(uint32_t in, uint32_t stride, uint32_t kernel, uint32_t dilation, uint32_t* head, uint32_t* tail) {
  const int64_t out = (int64_t{in} + stride - 1) / stride;
  const int64_t needed = std::max<int64_t>(0, (out - 1) * stride + (int64_t{kernel} - 1) * dilation + 1 - in);
  *head = static_cast<uint32_t>(needed / 2);
  *tail = static_cast<uint32_t>(needed - needed / 2);
}

// A random window over an h×w input with kernels from `kernels`, or nullopt when the draw gives
// no output. Explicit paddings stay below the (dilated) window, as NNAPI requires for pooling and
// the lowerings for convolutions, and within the DMA's 15.
std::optional<Window> randomWindow(GraphBuilder& g, uint32_t h, uint32_t w, const std::vector<uint32_t>& kernels,
                                   bool dilations) {
  Window win;
  win.kernelH = g.pick(kernels);
  win.kernelW = g.chance(0.75) ? win.kernelH : g.pick(kernels);
  win.strideY = g.pick(std::vector<uint32_t>{1, 1, 1, 2, 2, 3});
  win.strideX = g.chance(0.8) ? win.strideY : g.uniform(1, 3);
  if (dilations && g.chance(0.2)) {
    win.dilationY = g.uniform(1, 3);
    win.dilationX = g.chance(0.7) ? win.dilationY : g.uniform(1, 3);
  }
  const uint32_t windowH = (win.kernelH - 1) * win.dilationY + 1;
  const uint32_t windowW = (win.kernelW - 1) * win.dilationX + 1;
  win.implicit = g.chance(0.5);
  if (win.implicit) {
    win.scheme = g.chance(0.6) ? kPaddingSame : kPaddingValid;
    if (win.scheme == kPaddingSame) {
      samePadding(h, win.strideY, win.kernelH, win.dilationY, &win.padTop, &win.padBottom);
      samePadding(w, win.strideX, win.kernelW, win.dilationX, &win.padLeft, &win.padRight);
    }
  } else {
    const auto pad = [&](uint32_t window) { return g.chance(0.3) ? 0 : g.uniform(0, std::min(window - 1, kMaxPad)); };
    win.padTop = pad(windowH);
    win.padBottom = pad(windowH);
    win.padLeft = pad(windowW);
    win.padRight = pad(windowW);
  }
  if (std::max({win.padTop, win.padBottom, win.padLeft, win.padRight}) > kMaxPad) return std::nullopt;
  win.outH = outExtent(h, win.padTop, win.padBottom, win.kernelH, win.strideY, win.dilationY);
  win.outW = outExtent(w, win.padLeft, win.padRight, win.kernelW, win.strideX, win.dilationX);
  if (win.outH == 0 || win.outW == 0) return std::nullopt;
  return win;
}

// The window's operands in NNAPI order after the input (and for convolutions filter and bias):
// paddings or scheme, then strides.
std::vector<uint32_t> windowOperands(GraphBuilder& g, const Window& win) {
  if (win.implicit) return {g.int32(win.scheme), g.int32(win.strideX), g.int32(win.strideY)};
  return {g.int32(win.padLeft), g.int32(win.padRight), g.int32(win.padTop), g.int32(win.padBottom),
          g.int32(win.strideX), g.int32(win.strideY)};
}

// Optional trailing operands: the layout flag (NHWC), then the dilations. Dilations other than
// 1 need them; otherwise they are left out or given at random.
void appendLayoutAndDilations(GraphBuilder& g, const Window& win, std::vector<uint32_t>& inputs) {
  const bool dilated = win.dilationX != 1 || win.dilationY != 1;
  if (!dilated && g.chance(0.4)) return;
  inputs.push_back(g.model().addBool(false));
  if (!dilated && g.chance(0.5)) return;
  inputs.push_back(g.int32(win.dilationX));
  inputs.push_back(g.int32(win.dilationY));
}

// The filter of a convolution: per-tensor of the graph's type, or per-channel along
// `channelDim`. Returns the operand and the scale of each output channel.
std::pair<uint32_t, std::vector<float>> randomFilter(GraphBuilder& g, std::vector<uint32_t> dims, uint32_t channelDim,
                                                     bool perChannelAllowed) {
  const uint32_t channels = dims[channelDim];
  const uint64_t count = elementCount(dims);
  const double base = g.logUniform(0.002, 0.05);
  if (perChannelAllowed && g.chance(0.35)) {
    std::vector<float> scales(channels);
    for (auto& s : scales) s = static_cast<float>(base * g.logUniform(0.5, 2.0));
    std::vector<uint8_t> values = g.randomBytes(count);
    for (auto& v : values) {
      if (v == 0x80) v = 0x81;  // symmetric: -127..127
    }
    const uint32_t filter = g.model().addConstant(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, std::move(dims), values);
    g.model().setChannelQuant(filter, scales, channelDim);
    return {filter, scales};
  }
  const auto scale = static_cast<float>(base);
  const uint32_t filter =
      g.model().addConstant(g.type(), std::move(dims), g.randomBytes(count), scale, g.filterZeroPoint());
  return {filter, std::vector<float>(channels, scale)};
}

// Bias and output quantization of a convolution whose output channels sum `taps` products:
// the bias in the accumulator's units (scale input × filter, or 0 for per-channel filters), the
// output scale such that typical sums land tens of steps from the zero point.
struct Requantization {
  uint32_t bias = 0;
  float outputScale = 1.0f;
};
Requantization randomRequantization(GraphBuilder& g, const Tensor& input, const std::vector<float>& filterScales,
                                    bool perChannel, uint64_t taps) {
  const double spread = std::sqrt(static_cast<double>(taps)) * kTypicalSpread * 74.0;  // accumulator, in its units
  std::vector<int32_t> bias(filterScales.size());
  for (auto& b : bias) b = static_cast<int32_t>(g.uniform(0, static_cast<uint32_t>(2 * spread))) - static_cast<int32_t>(spread);
  float maxFilterScale = *std::max_element(filterScales.begin(), filterScales.end());
  Requantization r;
  r.bias = g.model().addConstant(OperandType::TENSOR_INT32, {static_cast<uint32_t>(bias.size())}, bias,
                                 perChannel ? 0.0f : input.scale * filterScales[0]);
  r.outputScale = static_cast<float>(input.scale * maxFilterScale * spread / g.logUniform(16, 96));
  return r;
}

bool isImage(const Tensor& t) { return t.dims.size() == 4; }

std::optional<Tensor> conv2d(GraphBuilder& g, const Tensor& in) {
  if (!isImage(in)) return std::nullopt;
  const uint32_t n = in.dims[0], h = in.dims[1], w = in.dims[2], cin = in.dims[3];
  const auto win = randomWindow(g, h, w, {1, 1, 2, 3, 3, 3, 5, 7}, true);
  if (!win || uint64_t{cin} * win->kernelH * win->kernelW > kMaxReductionLines) return std::nullopt;
  const uint64_t perChannel = uint64_t{n} * win->outH * win->outW * win->kernelH * win->kernelW * cin;
  uint32_t cout = g.chance(0.8) ? g.uniform(1, 40) : g.uniform(41, 96);
  cout = static_cast<uint32_t>(std::min<uint64_t>(cout, kMaxMacs / perChannel));
  cout = static_cast<uint32_t>(std::min<uint64_t>(cout, kMaxElements / (uint64_t{n} * win->outH * win->outW)));
  if (cout == 0) return std::nullopt;
  const auto [filter, scales] = randomFilter(g, {cout, win->kernelH, win->kernelW, cin}, 0, true);
  const bool perChannelFilter = g.model().model().main.operands[filter].type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
  const auto rq = randomRequantization(g, in, scales, perChannelFilter, uint64_t{win->kernelH} * win->kernelW * cin);
  std::vector<uint32_t> inputs = {in.operand, filter, rq.bias};
  for (uint32_t o : windowOperands(g, *win)) inputs.push_back(o);
  inputs.push_back(g.int32(g.fusedActivation(rq.outputScale)));
  appendLayoutAndDilations(g, *win, inputs);
  Tensor out = g.produce({n, win->outH, win->outW, cout}, rq.outputScale, g.zeroPoint());
  g.model().addOperation(OperationType::CONV_2D, inputs, {out.operand});
  return out;
}

std::optional<Tensor> depthwiseConv2d(GraphBuilder& g, const Tensor& in) {
  if (!isImage(in)) return std::nullopt;
  const uint32_t n = in.dims[0], h = in.dims[1], w = in.dims[2], c = in.dims[3];
  const uint32_t multiplier = g.chance(0.6) ? 1 : g.pick(std::vector<uint32_t>{2, 2, 3, 4, 5, 8});
  if (uint64_t{c} * multiplier > 160) return std::nullopt;
  const auto win = randomWindow(g, h, w, {1, 2, 3, 3, 3, 3, 5, 7}, true);
  if (!win) return std::nullopt;
  const uint32_t cout = c * multiplier;
  const uint64_t outElements = uint64_t{n} * win->outH * win->outW * cout;
  if (outElements > kMaxElements || outElements * win->kernelH * win->kernelW > kMaxMacs) return std::nullopt;
  const auto [filter, scales] = randomFilter(g, {1, win->kernelH, win->kernelW, cout}, 3, true);
  const bool perChannelFilter = g.model().model().main.operands[filter].type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
  const auto rq = randomRequantization(g, in, scales, perChannelFilter, uint64_t{win->kernelH} * win->kernelW);
  std::vector<uint32_t> inputs = {in.operand, filter, rq.bias};
  for (uint32_t o : windowOperands(g, *win)) inputs.push_back(o);
  inputs.push_back(g.int32(multiplier));
  inputs.push_back(g.int32(g.fusedActivation(rq.outputScale)));
  appendLayoutAndDilations(g, *win, inputs);
  Tensor out = g.produce({n, win->outH, win->outW, cout}, rq.outputScale, g.zeroPoint());
  g.model().addOperation(OperationType::DEPTHWISE_CONV_2D, inputs, {out.operand});
  return out;
}

// FULLY_CONNECTED over the last dimension (the other ones become the batch) or over everything
// but the first dimension (a flattening classifier).
std::optional<Tensor> fullyConnected(GraphBuilder& g, const Tensor& in) {
  if (in.dims.size() < 2) return std::nullopt;
  const uint64_t elements = elementCount(in.dims);
  const uint64_t k = g.chance(0.5) ? in.dims.back() : elements / in.dims[0];
  const uint64_t batch = elements / k;
  const uint32_t units = g.chance(0.85) ? g.uniform(1, 64) : g.uniform(65, 130);
  if (k > kMaxReductionLines || k * units > 400'000 || batch * k * units > kMaxMacs || batch * units > kMaxElements) return std::nullopt;
  const auto [weights, scales] =
      randomFilter(g, {units, static_cast<uint32_t>(k)}, 0, false);  // NNAPI has no per-channel FULLY_CONNECTED
  const auto rq = randomRequantization(g, in, scales, false, k);
  Tensor out = g.produce({static_cast<uint32_t>(batch), units}, rq.outputScale, g.zeroPoint());
  g.model().addOperation(OperationType::FULLY_CONNECTED, {in.operand, weights, rq.bias, g.int32(g.fusedActivation(rq.outputScale))},
                         {out.operand});
  return out;
}

// AVERAGE_POOL_2D and MAX_POOL_2D keep the quantization (NNAPI requires it of MAX_POOL_2D; the
// NPU lowers only that for both).
std::optional<Tensor> pool(GraphBuilder& g, const Tensor& in, OperationType type) {
  if (!isImage(in)) return std::nullopt;
  const uint32_t n = in.dims[0], h = in.dims[1], w = in.dims[2], c = in.dims[3];
  Window win;
  if (g.chance(0.15)) {  // global pooling, as networks end
    win.kernelH = h;
    win.kernelW = w;
    win.outH = win.outW = 1;
    win.implicit = g.chance(0.5);
  } else {
    auto drawn = randomWindow(g, h, w, {1, 2, 2, 3, 3, 4, 5, 7}, false);
    if (!drawn) return std::nullopt;
    win = *drawn;
  }
  if (uint64_t{n} * h * w * c * win.kernelH * win.kernelW / (uint64_t{win.strideX} * win.strideY) > kMaxMacs) {
    return std::nullopt;
  }
  std::vector<uint32_t> inputs = {in.operand};
  for (uint32_t o : windowOperands(g, win)) inputs.push_back(o);
  inputs.push_back(g.int32(win.kernelW));
  inputs.push_back(g.int32(win.kernelH));
  inputs.push_back(g.int32(g.fusedActivation(in.scale)));
  if (g.chance(0.4)) inputs.push_back(g.model().addBool(false));
  Tensor out = g.produce({n, win.outH, win.outW, c}, in.scale, in.zeroPoint);
  g.model().addOperation(type, inputs, {out.operand});
  return out;
}
std::optional<Tensor> averagePool2d(GraphBuilder& g, const Tensor& in) { return pool(g, in, OperationType::AVERAGE_POOL_2D); }
std::optional<Tensor> maxPool2d(GraphBuilder& g, const Tensor& in) { return pool(g, in, OperationType::MAX_POOL_2D); }

// ---- element-wise arithmetic: the joins of the graph -----------------------------------------

// The second operand of a binary operation on `a`: another tensor of the graph with a's shape
// when there is one (a join), else a new model input or constant of a's shape or of a shape that
// broadcasts to it.
Tensor partnerOf(GraphBuilder& g, const Tensor& a) {
  std::vector<Tensor> joins;
  for (const Tensor& t : g.tensors()) {
    if (t.dims == a.dims && t.operand != a.operand && !t.approximate) joins.push_back(t);
  }
  if (!joins.empty() && g.chance(0.7)) return g.pick(joins);
  if (g.chance(0.05)) return a;  // x op x
  std::vector<uint32_t> dims = a.dims;
  const double shape = static_cast<double>(g.uniform(0, 99)) / 100;
  if (shape < 0.2) {
    dims = {a.dims.back()};  // per channel
  } else if (shape < 0.35) {
    for (auto& d : dims) d = g.chance(0.5) ? 1 : d;  // some axes broadcast
  } else if (shape < 0.4) {
    dims = {1};
  }
  const float scale = static_cast<float>(a.scale * g.logUniform(0.25, 4));
  return g.chance(0.7) ? g.input(dims, scale, g.zeroPoint()) : g.constant(dims, scale, g.zeroPoint());
}

std::optional<Tensor> binary(GraphBuilder& g, const Tensor& first, OperationType type) {
  Tensor a = first;
  Tensor b = partnerOf(g, first);
  if (g.chance(0.3)) std::swap(a, b);  // the broadcast operand first
  std::vector<uint32_t> dims(std::max(a.dims.size(), b.dims.size()));
  for (size_t i = 0; i < dims.size(); ++i) {  // NNAPI broadcasting, aligned at the last axis
    const uint32_t da = i < dims.size() - a.dims.size() ? 1 : a.dims[i - (dims.size() - a.dims.size())];
    const uint32_t db = i < dims.size() - b.dims.size() ? 1 : b.dims[i - (dims.size() - b.dims.size())];
    dims[i] = std::max(da, db);
  }
  float scale = 0;
  if (type == OperationType::MUL) {
    // Products spread about kTypicalSpread² steps of a.scale × b.scale; NNAPI's MUL (and the
    // NPU) need the output scale above that product.
    scale = static_cast<float>(a.scale * b.scale * kTypicalSpread * kTypicalSpread / g.logUniform(8, 80));
  } else {
    scale = static_cast<float>(std::max(a.scale, b.scale) * g.logUniform(0.5, 3));
  }
  Tensor out = g.produce(dims, scale, g.zeroPoint());
  g.consume(b);
  g.model().addOperation(type, {a.operand, b.operand, g.int32(g.fusedActivation(scale))}, {out.operand});
  return out;
}
std::optional<Tensor> add(GraphBuilder& g, const Tensor& in) { return binary(g, in, OperationType::ADD); }
std::optional<Tensor> sub(GraphBuilder& g, const Tensor& in) { return binary(g, in, OperationType::SUB); }
std::optional<Tensor> mul(GraphBuilder& g, const Tensor& in) { return binary(g, in, OperationType::MUL); }

// ---- shape views -----------------------------------------------------------------------------

// `elements` as a random shape of rank 1..4.
std::vector<uint32_t> randomShape(GraphBuilder& g, uint64_t elements) {
  const uint32_t rank = g.uniform(1, 4);
  std::vector<uint32_t> dims(rank, 1);
  uint64_t left = elements;
  for (uint32_t i = 0; i + 1 < rank; ++i) {
    std::vector<uint32_t> divisors;
    for (uint32_t d = 1; d <= 64 && d <= left; ++d) {
      if (left % d == 0) divisors.push_back(d);
    }
    dims[i] = g.pick(divisors);
    left /= dims[i];
  }
  dims[rank - 1] = static_cast<uint32_t>(left);
  std::reverse(dims.begin(), dims.end());  // the large remainder first, channels last small
  if (g.chance(0.5)) std::swap(dims.front(), dims.back());
  return dims;
}

std::optional<Tensor> reshape(GraphBuilder& g, const Tensor& in) {
  std::vector<uint32_t> dims = randomShape(g, elementCount(in.dims));
  std::vector<int32_t> shape(dims.begin(), dims.end());
  if (g.chance(0.2)) shape[g.uniform(0, static_cast<uint32_t>(shape.size() - 1))] = -1;  // inferred
  Tensor out = g.produce(dims, in.scale, in.zeroPoint);
  g.model().addOperation(OperationType::RESHAPE, {in.operand, g.int32s(shape)}, {out.operand});
  return out;
}

std::optional<Tensor> squeeze(GraphBuilder& g, const Tensor& in) {
  std::vector<int32_t> axes;
  std::vector<uint32_t> dims;
  for (size_t i = 0; i < in.dims.size(); ++i) {
    if (in.dims[i] == 1 && (axes.empty() || g.chance(0.7))) {
      axes.push_back(static_cast<int32_t>(i));
    } else {
      dims.push_back(in.dims[i]);
    }
  }
  if (axes.empty() || dims.empty()) return std::nullopt;  // nothing to squeeze, or a scalar
  Tensor out = g.produce(dims, in.scale, in.zeroPoint);
  g.model().addOperation(OperationType::SQUEEZE, {in.operand, g.int32s(axes)}, {out.operand});
  return out;
}

std::optional<Tensor> expandDims(GraphBuilder& g, const Tensor& in) {
  if (in.dims.size() >= 4) return std::nullopt;
  const auto rank = static_cast<int32_t>(in.dims.size());
  const int32_t axis = static_cast<int32_t>(g.uniform(0, static_cast<uint32_t>(2 * rank + 1))) - (rank + 1);
  const auto at = static_cast<size_t>(axis < 0 ? axis + rank + 1 : axis);
  std::vector<uint32_t> dims = in.dims;
  dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(at), 1);
  Tensor out = g.produce(dims, in.scale, in.zeroPoint);
  g.model().addOperation(OperationType::EXPAND_DIMS, {in.operand, g.int32(axis)}, {out.operand});
  return out;
}

// ---- the table --------------------------------------------------------------------------------

// One row per operation: how often it is drawn, and the generator. A generator consumes `input`
// (and whatever else it picks), adds its constants and its operation, and returns the output; or
// returns nullopt, adding nothing, when its draw does not fit this input.
struct OperationGenerator {
  OperationType type;
  uint32_t weight;
  std::optional<Tensor> (*generate)(GraphBuilder& g, const Tensor& input);
};

const std::vector<OperationGenerator>& generators() {
  static const std::vector<OperationGenerator> table = {
      {OperationType::CONV_2D, 6, conv2d},
      {OperationType::DEPTHWISE_CONV_2D, 4, depthwiseConv2d},
      {OperationType::FULLY_CONNECTED, 2, fullyConnected},
      {OperationType::AVERAGE_POOL_2D, 2, averagePool2d},
      {OperationType::MAX_POOL_2D, 2, maxPool2d},
      {OperationType::ADD, 3, add},
      {OperationType::SUB, 2, sub},
      {OperationType::MUL, 2, mul},
      {OperationType::RESHAPE, 1, reshape},
      {OperationType::SQUEEZE, 1, squeeze},
      {OperationType::EXPAND_DIMS, 1, expandDims},
  };
  return table;
}

const OperationGenerator& drawGenerator(GraphBuilder& g) {
  uint32_t total = 0;
  for (const auto& row : generators()) total += row.weight;
  uint32_t ticket = g.uniform(0, total - 1);
  for (const auto& row : generators()) {
    if (ticket < row.weight) return row;
    ticket -= row.weight;
  }
  return generators().back();
}

// The first model input: mostly a small image, sometimes one larger than the scratchpad, a batch
// of two, or a matrix for a classifier.
Tensor firstInput(GraphBuilder& g) {
  std::vector<uint32_t> dims;
  const double kind = static_cast<double>(g.uniform(0, 99)) / 100;
  if (kind < 0.1) {
    dims = {g.uniform(1, 4), g.uniform(1, 300)};
  } else if (kind < 0.18) {
    dims = {1, g.uniform(62, 64), g.uniform(62, 64), g.uniform(72, 96)};  // above the 256 KiB scratchpad
  } else {
    const uint32_t h = g.chance(0.75) ? g.uniform(1, 20) : g.uniform(21, 64);
    const uint32_t w = g.chance(0.8) ? h : g.uniform(1, 64);
    const uint32_t c = g.chance(0.8) ? g.uniform(1, 40) : g.uniform(41, 96);
    dims = {g.chance(0.9) ? 1u : 2u, h, w, c};
    if (elementCount(dims) > kMaxElements) dims[3] = static_cast<uint32_t>(kMaxElements / (dims[0] * uint64_t{h} * w));
  }
  return g.input(dims, g.activationScale(), g.zeroPoint());
}

}  // namespace

RandomGraph generateRandomGraph(uint32_t seed, const RandomGraphOptions& options) {
  GraphBuilder g(seed);
  g.add(firstInput(g));
  const uint32_t operations = g.uniform(1, std::max(1u, options.maxOperations));
  for (uint32_t i = 0; i < operations; ++i) {
    std::vector<Tensor> candidates;
    for (const Tensor& t : g.tensors()) {
      if (!t.approximate) candidates.push_back(t);
    }
    // Mostly extend the newest tensor (chains); otherwise branch from an older one (fan-out).
    const Tensor input = g.chance(0.65) ? candidates.back() : g.pick(candidates);
    for (int attempt = 0; attempt < 50; ++attempt) {
      const size_t inputsBefore = g.model().model().main.inputIndexes.size();
      const OperationGenerator& row = drawGenerator(g);
      std::optional<Tensor> out = row.generate(g, input);
      if (!out) continue;
      g.consume(input);
      for (size_t k = inputsBefore; k < g.model().model().main.inputIndexes.size(); ++k) {
        // A model input a binary operation created is consumed already; it joins the graph.
        const uint32_t operand = g.model().model().main.inputIndexes[k];
        const auto& o = g.model().model().main.operands[operand];
        g.add(Tensor{.operand = operand, .dims = o.dimensions, .scale = o.scale, .zeroPoint = o.zeroPoint});
        g.consume(g.tensors().back());
      }
      g.add(std::move(*out));
      break;
    }
  }
  return g.finish(seed);
}

std::vector<hal::OperationType> randomGraphOperationTypes() {
  std::vector<hal::OperationType> types;
  for (const auto& row : generators()) types.push_back(row.type);
  return types;
}

}  // namespace sable::testing
