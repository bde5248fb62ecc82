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

// Scales grow along chains (a MUL's output scale is about its inputs' product): a tensor outside
// this range ends the graph, so that no scale overflows while huge and tiny ones still occur.
constexpr float kMinConsumedScale = 1e-6f;
constexpr float kMaxConsumedScale = 1e3f;

// Whether later operations may read `t`.
bool consumable(const Tensor& t) {
  return !t.approximate && t.scale >= kMinConsumedScale && t.scale <= kMaxConsumedScale;
}

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
  GraphBuilder(uint32_t seed, const RandomGraphOptions& options) : rng_(seed), options_(options) {
    type_ = chance(0.5) ? kU8 : kS8;
  }

  // ---- what the lowerings take on the configuration ----
  // The convolution lowering keeps the weights of one block of output channels — input channels
  // × kernel taps scratchpad lines — in the scratchpad with a tile of input; it does not split
  // that reduction, so it refuses when the two do not fit (above about 15 000 lines on s16, 5 700
  // with a wide input on s8: CONV_2D after a RESHAPE to many channels, FULLY_CONNECTED flattening
  // a large image). Kept to half the scratchpad here.
  uint64_t maxReductionLines() const { return uint64_t{options_.scratchpadLines} / 2; }
  // MEAN is a depthwise layer whose weights (window elements × channel blocks) must fit in half
  // the scratchpad.
  uint64_t maxMeanWeightLines() const { return uint64_t{options_.scratchpadLines} * 3 / 8; }
  uint32_t arrayDim() const { return options_.arrayDim; }

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
  RandomGraphOptions options_;
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
  if (!win || uint64_t{cin} * win->kernelH * win->kernelW > g.maxReductionLines()) return std::nullopt;
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

// GROUPED_CONV_2D: groups dividing the input channels, each group's outputs from its inputs only.
// NNAPI gives it no dilations and always the layout flag.
std::optional<Tensor> groupedConv2d(GraphBuilder& g, const Tensor& in) {
  if (!isImage(in)) return std::nullopt;
  const uint32_t n = in.dims[0], h = in.dims[1], w = in.dims[2], cin = in.dims[3];
  std::vector<uint32_t> divisors;
  for (uint32_t d = 2; d <= std::min(cin, 16u); ++d) {
    if (cin % d == 0) divisors.push_back(d);
  }
  if (divisors.empty()) return std::nullopt;
  const uint32_t groups = g.pick(divisors);
  const auto win = randomWindow(g, h, w, {1, 2, 3, 3, 5}, false);
  if (!win) return std::nullopt;
  const uint32_t perGroup = cin / groups;
  uint32_t cout = groups * g.uniform(1, std::max(1u, 48 / groups));
  const uint64_t outPixels = uint64_t{n} * win->outH * win->outW;
  if (outPixels * cout * win->kernelH * win->kernelW * perGroup > kMaxMacs || outPixels * cout > kMaxElements) {
    return std::nullopt;
  }
  const auto [filter, scales] = randomFilter(g, {cout, win->kernelH, win->kernelW, perGroup}, 0, true);
  const bool perChannelFilter = g.model().model().main.operands[filter].type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
  const auto rq = randomRequantization(g, in, scales, perChannelFilter, uint64_t{win->kernelH} * win->kernelW * perGroup);
  std::vector<uint32_t> inputs = {in.operand, filter, rq.bias};
  for (uint32_t o : windowOperands(g, *win)) inputs.push_back(o);
  inputs.push_back(g.int32(groups));
  inputs.push_back(g.int32(g.fusedActivation(rq.outputScale)));
  inputs.push_back(g.model().addBool(false));
  Tensor out = g.produce({n, win->outH, win->outW, cout}, rq.outputScale, g.zeroPoint());
  g.model().addOperation(OperationType::GROUPED_CONV_2D, inputs, {out.operand});
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
  if (k > g.maxReductionLines() || k * units > 400'000 || batch * k * units > kMaxMacs || batch * units > kMaxElements) return std::nullopt;
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

// MEAN over the spatial axes (all the NPU lowers), uint8 with the output quantization of the
// input: the reference's truncating integer mean, which the NPU reproduces for every window.
// Requantizing means and int8 means are left to mean_test: the compiler lowers a requantizing
// mean only where it proves every sum exact (a few percent of scales are refused for near ties
// in the reference's float rounding), and int8 with equal quantization not at all — neither can
// be predicted here without that proof.
//
// The lowering refuses two more kinds of MEAN, kept out here: windows whose depthwise weights
// exceed half the scratchpad (GraphBuilder::maxMeanWeightLines), and equal-quantization means of
// more than about 3 700 elements, where no POSTPROC multiplier reproduces the truncation for
// every sum.
constexpr uint64_t kMaxMeanElements = 2048;

std::optional<Tensor> mean(GraphBuilder& g, const Tensor& in) {
  if (!isImage(in) || g.isSigned()) return std::nullopt;
  const std::vector<std::vector<int32_t>> choices = {{1, 2}, {1, 2}, {-3, -2}, {2, 1}, {1}, {2}, {-2}};
  const std::vector<int32_t>& axes = g.pick(choices);
  uint64_t window = 1;
  for (int32_t a : axes) window *= in.dims[static_cast<size_t>(a < 0 ? a + 4 : a)];
  const uint64_t blocks = (in.dims[3] + g.arrayDim() - 1) / g.arrayDim();
  if (window > kMaxMeanElements || window * blocks > g.maxMeanWeightLines()) return std::nullopt;
  const bool keepDims = g.chance(0.5);
  std::vector<uint32_t> dims;
  for (int32_t d = 0; d < 4; ++d) {
    const bool reduced = std::any_of(axes.begin(), axes.end(), [&](int32_t a) { return (a < 0 ? a + 4 : a) == d; });
    if (!reduced) {
      dims.push_back(in.dims[d]);
    } else if (keepDims) {
      dims.push_back(1);
    }
  }
  Tensor out = g.produce(dims, in.scale, in.zeroPoint);
  g.model().addOperation(OperationType::MEAN, {in.operand, g.int32s(axes), g.int32(keepDims ? 1 : 0)}, {out.operand});
  return out;
}

// ---- activations --------------------------------------------------------------------------------

// RELU, RELU1, RELU6 keep the quantization (NNAPI requires it); RELU1 and RELU6 only where their
// range spans at least 16 steps. After a layer with no fused activation whose output nobody else
// reads, the compiler folds them into that layer's clamp; elsewhere they run as tables.
std::optional<Tensor> relu(GraphBuilder& g, const Tensor& in, OperationType type, float range) {
  if (range > 0 && in.scale > range / 16) return std::nullopt;
  Tensor out = g.produce(in.dims, in.scale, in.zeroPoint);
  g.model().addOperation(type, {in.operand}, {out.operand});
  return out;
}
std::optional<Tensor> relu0(GraphBuilder& g, const Tensor& in) { return relu(g, in, OperationType::RELU, 0); }
std::optional<Tensor> relu1(GraphBuilder& g, const Tensor& in) { return relu(g, in, OperationType::RELU1, 1); }
std::optional<Tensor> relu6(GraphBuilder& g, const Tensor& in) { return relu(g, in, OperationType::RELU6, 6); }

// LOGISTIC, TANH, HARD_SWISH: tables the compiler computes in floating point, within ±1 of the
// reference, so their outputs end the graph. LOGISTIC and TANH have the output quantization
// NNAPI fixes; HARD_SWISH any.
std::optional<Tensor> smoothActivation(GraphBuilder& g, const Tensor& in, OperationType type) {
  float scale = 0;
  int32_t zeroPoint = 0;
  if (type == OperationType::LOGISTIC) {
    scale = 1.0f / 256;
    zeroPoint = g.isSigned() ? -128 : 0;
  } else if (type == OperationType::TANH) {
    scale = 1.0f / 128;
    zeroPoint = g.isSigned() ? 0 : 128;
  } else {
    scale = static_cast<float>(in.scale * g.logUniform(0.5, 2));
    zeroPoint = g.zeroPoint();
  }
  Tensor out = g.produce(in.dims, scale, zeroPoint, isApproximatedOnTheNpu(type));
  g.model().addOperation(type, {in.operand}, {out.operand});
  return out;
}
std::optional<Tensor> logistic(GraphBuilder& g, const Tensor& in) { return smoothActivation(g, in, OperationType::LOGISTIC); }
std::optional<Tensor> tanhActivation(GraphBuilder& g, const Tensor& in) {
  return smoothActivation(g, in, OperationType::TANH);
}
std::optional<Tensor> hardSwish(GraphBuilder& g, const Tensor& in) {
  return smoothActivation(g, in, OperationType::HARD_SWISH);
}

// ---- data movement ------------------------------------------------------------------------------

// CONCATENATION along a random axis of `first` and one to three more tensors that agree with it off
// the axis: tensors of the graph (joins) or new model inputs and constants. The output has the
// first input's quantization or a new one (the others are requantized into it).
std::optional<Tensor> concatenation(GraphBuilder& g, const Tensor& first) {
  const auto rank = static_cast<uint32_t>(first.dims.size());
  const uint32_t axis = g.uniform(0, rank - 1);
  std::vector<Tensor> joins;
  for (const Tensor& t : g.tensors()) {
    if (t.operand == first.operand || !consumable(t) || t.dims.size() != rank) continue;
    bool agrees = true;
    for (uint32_t d = 0; d < rank; ++d) agrees = agrees && (d == axis || t.dims[d] == first.dims[d]);
    if (agrees) joins.push_back(t);
  }
  // Shapes first, so that nothing is added to the model when the result would be too large.
  const uint32_t more = g.uniform(1, 3);
  std::vector<std::optional<Tensor>> picked(more);
  std::vector<uint32_t> extents(more);
  uint64_t total = first.dims[axis];
  for (uint32_t i = 0; i < more; ++i) {
    if (!joins.empty() && g.chance(0.5)) picked[i] = g.pick(joins);
    extents[i] = picked[i] ? picked[i]->dims[axis] : g.uniform(1, 24);
    total += extents[i];
  }
  std::vector<uint32_t> dims = first.dims;
  dims[axis] = static_cast<uint32_t>(total);
  if (elementCount(dims) > kMaxElements) return std::nullopt;
  std::vector<uint32_t> inputs = {first.operand};
  for (uint32_t i = 0; i < more; ++i) {
    if (!picked[i]) {
      std::vector<uint32_t> partDims = first.dims;
      partDims[axis] = extents[i];
      const float scale = static_cast<float>(first.scale * g.logUniform(0.5, 2));
      picked[i] = g.chance(0.8) ? g.input(partDims, scale, g.zeroPoint()) : g.constant(partDims, scale, g.zeroPoint());
    }
    g.consume(*picked[i]);
    inputs.push_back(picked[i]->operand);
  }
  inputs.push_back(g.int32(axis));
  const bool requantize = g.chance(0.5);
  Tensor out = g.produce(dims, requantize ? g.activationScale() : first.scale, requantize ? g.zeroPoint() : first.zeroPoint);
  g.model().addOperation(OperationType::CONCATENATION, inputs, {out.operand});
  return out;
}

// PAD and PAD_V2: random paddings up to 4 on each side of each axis (NNAPI keeps the
// quantization; PAD fills with the zero point, PAD_V2 with a random value of the type).
std::optional<Tensor> pad(GraphBuilder& g, const Tensor& in, OperationType type) {
  std::vector<int32_t> paddings;
  std::vector<uint32_t> dims = in.dims;
  for (uint32_t& d : dims) {
    const uint32_t head = g.chance(0.4) ? 0 : g.uniform(0, 4);
    const uint32_t tail = g.chance(0.4) ? 0 : g.uniform(0, 4);
    paddings.push_back(static_cast<int32_t>(head));
    paddings.push_back(static_cast<int32_t>(tail));
    d += head + tail;
  }
  if (elementCount(dims) > kMaxElements) return std::nullopt;
  const uint32_t shape = g.model().addConstant(OperandType::TENSOR_INT32, {static_cast<uint32_t>(in.dims.size()), 2},
                                               paddings);
  std::vector<uint32_t> inputs = {in.operand, shape};
  if (type == OperationType::PAD_V2) inputs.push_back(g.int32(static_cast<int32_t>(g.uniform(0, 255)) - (g.isSigned() ? 128 : 0)));
  Tensor out = g.produce(dims, in.scale, in.zeroPoint);
  g.model().addOperation(type, inputs, {out.operand});
  return out;
}
std::optional<Tensor> pad1(GraphBuilder& g, const Tensor& in) { return pad(g, in, OperationType::PAD); }
std::optional<Tensor> padV2(GraphBuilder& g, const Tensor& in) { return pad(g, in, OperationType::PAD_V2); }

// DEPTH_TO_SPACE and SPACE_TO_DEPTH with a block size the shape allows.
std::optional<Tensor> depthToSpace(GraphBuilder& g, const Tensor& in) {
  if (!isImage(in)) return std::nullopt;
  std::vector<uint32_t> blocks;
  for (uint32_t b = 2; b <= 4; ++b) {
    if (in.dims[3] % (b * b) == 0) blocks.push_back(b);
  }
  if (blocks.empty()) return std::nullopt;
  const uint32_t b = g.pick(blocks);
  std::vector<uint32_t> inputs = {in.operand, g.int32(b)};
  if (g.chance(0.3)) inputs.push_back(g.model().addBool(false));
  Tensor out = g.produce({in.dims[0], in.dims[1] * b, in.dims[2] * b, in.dims[3] / (b * b)}, in.scale, in.zeroPoint);
  g.model().addOperation(OperationType::DEPTH_TO_SPACE, inputs, {out.operand});
  return out;
}
std::optional<Tensor> spaceToDepth(GraphBuilder& g, const Tensor& in) {
  if (!isImage(in)) return std::nullopt;
  std::vector<uint32_t> blocks;
  for (uint32_t b = 2; b <= 4; ++b) {
    if (in.dims[1] % b == 0 && in.dims[2] % b == 0) blocks.push_back(b);
  }
  if (blocks.empty()) return std::nullopt;
  const uint32_t b = g.pick(blocks);
  std::vector<uint32_t> inputs = {in.operand, g.int32(b)};
  if (g.chance(0.3)) inputs.push_back(g.model().addBool(false));
  Tensor out = g.produce({in.dims[0], in.dims[1] / b, in.dims[2] / b, in.dims[3] * b * b}, in.scale, in.zeroPoint);
  g.model().addOperation(OperationType::SPACE_TO_DEPTH, inputs, {out.operand});
  return out;
}

// RESIZE_NEAREST_NEIGHBOR to a random size (up or down), given as a size; with the 1.3 flags
// now and then (align_corners and half_pixel_centers never both).
std::optional<Tensor> resizeNearest(GraphBuilder& g, const Tensor& in) {
  if (!isImage(in)) return std::nullopt;
  const uint32_t h = g.uniform(1, std::min(64u, in.dims[1] * 3)), w = g.uniform(1, std::min(64u, in.dims[2] * 3));
  std::vector<uint32_t> dims = {in.dims[0], h, w, in.dims[3]};
  if (elementCount(dims) > kMaxElements) return std::nullopt;
  std::vector<uint32_t> inputs = {in.operand, g.int32(w), g.int32(h), g.model().addBool(false)};  // the layout: required
  if (g.chance(0.5)) {
    const uint32_t flags = g.uniform(0, 2);  // none, align_corners, half_pixel_centers
    inputs.push_back(g.model().addBool(flags == 1));
    inputs.push_back(g.model().addBool(flags == 2));
  }
  Tensor out = g.produce(dims, in.scale, in.zeroPoint);
  g.model().addOperation(OperationType::RESIZE_NEAREST_NEIGHBOR, inputs, {out.operand});
  return out;
}

// SOFTMAX along the last axis (the NPU runs no other; the axis operand given now and then, as −1
// or rank − 1), a random beta, the output quantization NNAPI fixes. Rows of up to 4096 bytes, so
// that one fits the s8 scratchpad beside the table.
std::optional<Tensor> softmax(GraphBuilder& g, const Tensor& in) {
  if (in.dims.back() > 4096) return std::nullopt;
  const auto beta = static_cast<float>(g.chance(0.5) ? 1.0 : g.logUniform(0.1, 4));
  std::vector<uint32_t> inputs = {in.operand, g.model().addFloat32(beta)};
  const auto rank = static_cast<int32_t>(in.dims.size());
  if (g.chance(0.4)) inputs.push_back(g.int32(g.chance(0.5) ? -1 : rank - 1));
  Tensor out = g.produce(in.dims, 1.0f / 256, g.isSigned() ? -128 : 0, isApproximatedOnTheNpu(OperationType::SOFTMAX));
  g.model().addOperation(OperationType::SOFTMAX, inputs, {out.operand});
  return out;
}

// ---- element-wise arithmetic: the joins of the graph -----------------------------------------

// The second operand of a binary operation on `a`: another tensor of the graph with a's shape
// when there is one (a join), else a new model input or constant of a's shape or of a shape that
// broadcasts to it.
Tensor partnerOf(GraphBuilder& g, const Tensor& a) {
  std::vector<Tensor> joins;
  for (const Tensor& t : g.tensors()) {
    if (t.dims == a.dims && t.operand != a.operand && consumable(t)) joins.push_back(t);
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
      {OperationType::GROUPED_CONV_2D, 2, groupedConv2d},
      {OperationType::FULLY_CONNECTED, 2, fullyConnected},
      {OperationType::AVERAGE_POOL_2D, 2, averagePool2d},
      {OperationType::MAX_POOL_2D, 2, maxPool2d},
      {OperationType::ADD, 3, add},
      {OperationType::SUB, 2, sub},
      {OperationType::MUL, 2, mul},
      {OperationType::RESHAPE, 1, reshape},
      {OperationType::SQUEEZE, 1, squeeze},
      {OperationType::EXPAND_DIMS, 1, expandDims},
      {OperationType::MEAN, 2, mean},
      {OperationType::RELU, 2, relu0},
      {OperationType::RELU1, 1, relu1},
      {OperationType::RELU6, 1, relu6},
      {OperationType::LOGISTIC, 1, logistic},
      {OperationType::TANH, 1, tanhActivation},
      {OperationType::HARD_SWISH, 1, hardSwish},
      {OperationType::CONCATENATION, 2, concatenation},
      {OperationType::PAD, 1, pad1},
      {OperationType::PAD_V2, 1, padV2},
      {OperationType::DEPTH_TO_SPACE, 2, depthToSpace},
      {OperationType::SPACE_TO_DEPTH, 2, spaceToDepth},
      {OperationType::RESIZE_NEAREST_NEIGHBOR, 1, resizeNearest},
      {OperationType::SOFTMAX, 2, softmax},
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
  GraphBuilder g(seed, options);
  g.add(firstInput(g));
  const uint32_t operations = g.uniform(1, std::max(1u, options.maxOperations));
  for (uint32_t i = 0; i < operations; ++i) {
    std::vector<Tensor> candidates;
    for (const Tensor& t : g.tensors()) {
      if (consumable(t)) candidates.push_back(t);
    }
    if (candidates.empty()) break;
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

bool isApproximatedOnTheNpu(hal::OperationType type) {
  return type == OperationType::LOGISTIC || type == OperationType::TANH || type == OperationType::HARD_SWISH;
}

std::vector<hal::OperationType> randomGraphOperationTypes() {
  std::vector<hal::OperationType> types;
  for (const auto& row : generators()) types.push_back(row.type);
  return types;
}

}  // namespace sable::testing
