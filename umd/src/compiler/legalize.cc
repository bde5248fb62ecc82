// Legalization of NNAPI operations into NPU layers (legalize.h). The operand lists follow the
// NNAPI signatures (hal/src/operation_signatures.cc); the model is validated before it gets
// here, so a malformed operation is an internal error rather than a user-facing one.
#include "sable/umd/compiler/legalize.h"

#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "mean_requantization.h"
#include "sable/hal/operand_data.h"
#include "sable/umd/compiler/tables.h"

namespace sable::umd::compiler {
namespace {

using hal::Operand;
using hal::OperandType;
using hal::OperationType;

constexpr int32_t kPaddingSame = 1;  // NNAPI PaddingCode
constexpr int32_t kPaddingValid = 2;

bool isQuant8Activation(OperandType type) {
  return type == OperandType::TENSOR_QUANT8_ASYMM || type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
}

// Reads the operation's operands with messages that name them.
class OperationReader {
 public:
  OperationReader(const hal::Model& model, uint32_t index)
      : model_(model), subgraph_(model.main), operation_(model.main.operations.at(index)), index_(index) {}

  const hal::Operation& operation() const { return operation_; }
  size_t inputCount() const { return operation_.inputs.size(); }
  const Operand& input(size_t i) const { return subgraph_.operands.at(operation_.inputs.at(i)); }
  uint32_t inputIndex(size_t i) const { return operation_.inputs.at(i); }
  const Operand& output() const { return subgraph_.operands.at(operation_.outputs.at(0)); }
  uint32_t outputIndex() const { return operation_.outputs.at(0); }

  template <typename... Args>
  hal::Error unsupported(fmt::format_string<Args...> format, Args&&... args) const {
    return hal::invalidArgument("operation {} ({}): {}", index_, hal::toString(operation_.type),
                                fmt::format(format, std::forward<Args>(args)...));
  }

  hal::Result<int32_t> scalar(size_t i, const char* what) const {
    const auto value = hal::constantScalar(model_, input(i));
    if (!value) return unsupported("{} (input {}) must be a constant", what, i);
    return *value;
  }
  hal::Result<std::vector<uint8_t>> bytes(size_t i, const char* what) const {
    const auto data = hal::constantBytes(model_, input(i));
    if (!data) return unsupported("{} (input {}) must be a constant", what, i);
    return std::vector<uint8_t>(data->begin(), data->end());
  }
  hal::Result<std::vector<int32_t>> int32s(size_t i, const char* what) const {
    SABLE_ASSIGN_OR_RETURN(auto raw, bytes(i, what));
    std::vector<int32_t> values(raw.size() / sizeof(int32_t));
    if (!values.empty()) std::memcpy(values.data(), raw.data(), values.size() * sizeof(int32_t));
    return values;
  }
  // An operand the NPU reads or writes: quant8, fully known shape, rank ≤ 4.
  hal::Result<TensorView> activation(const Operand& operand, const char* what) const {
    if (!isQuant8Activation(operand.type)) {
      return unsupported("{} is {}: the NPU runs TENSOR_QUANT8_ASYMM and TENSOR_QUANT8_ASYMM_SIGNED tensors",
                         what, hal::toString(operand.type));
    }
    if (operand.dimensions.empty() || operand.dimensions.size() > 4) {
      return unsupported("{} has rank {}: the NPU takes ranks 1 to 4", what, operand.dimensions.size());
    }
    for (uint32_t d : operand.dimensions) {
      if (d == 0) return unsupported("{} has an unknown dimension: the NPU needs shapes known at compile time", what);
    }
    std::array<uint32_t, 4> nhwc = {1, 1, 1, 1};
    const size_t rank = operand.dimensions.size();
    for (size_t i = 0; i < rank; ++i) nhwc[4 - rank + i] = operand.dimensions[i];
    TensorView view;
    view.n = nhwc[0];
    view.h = nhwc[1];
    view.w = nhwc[2];
    view.c = nhwc[3];
    view.quant = {.type = operand.type, .scale = operand.scale, .zeroPoint = operand.zeroPoint};
    return view;
  }

 private:
  const hal::Model& model_;
  const hal::Subgraph& subgraph_;
  const hal::Operation& operation_;
  uint32_t index_;
};

hal::Result<hal::FusedActivation> fusedActivation(const OperationReader& r, size_t i) {
  SABLE_ASSIGN_OR_RETURN(const int32_t code, r.scalar(i, "the fused activation"));
  if (code < 0 || code > 3) return r.unsupported("fused activation {} is not one of NONE, RELU, RELU1, RELU6", code);
  return static_cast<hal::FusedActivation>(code);
}

// NNAPI's implicit padding: SAME pads so that out = ⌈in / stride⌉, the odd pixel at the end.
void implicitPadding(uint32_t in, uint32_t stride, uint32_t kernel, uint32_t dilation, int32_t scheme,
                     uint32_t* head, uint32_t* tail) {
  *head = *tail = 0;
  if (scheme != kPaddingSame) return;
  const int64_t out = (int64_t{in} + stride - 1) / stride;
  const int64_t needed = (out - 1) * stride + (int64_t{kernel} - 1) * dilation + 1 - in;
  if (needed <= 0) return;
  *head = static_cast<uint32_t>(needed / 2);
  *tail = static_cast<uint32_t>(needed - needed / 2);
}

// The data-layout flag: NCHW is not lowered yet.
hal::Result<void> requireNhwc(const OperationReader& r, size_t i) {
  if (r.inputCount() <= i) return {};
  SABLE_ASSIGN_OR_RETURN(const int32_t nchw, r.scalar(i, "the data layout"));
  if (nchw != 0) return r.unsupported("NCHW layout is not lowered to the NPU yet (NHWC is)");
  return {};
}

hal::Result<void> readFilter(const OperationReader& r, ConvLayer& layer, uint32_t channelDim) {
  const Operand& filter = r.input(1);
  if (filter.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL) {
    const auto* cq = filter.channelQuant();
    if (cq == nullptr || cq->channelDim != channelDim) {
      return r.unsupported("per-channel filter quantized along dimension {} (the NPU needs {})",
                           cq == nullptr ? 0u : cq->channelDim, channelDim);
    }
    layer.filterQuant = {.type = filter.type, .scale = 0.0f, .zeroPoint = 0, .channelScales = cq->scales};
  } else if (isQuant8Activation(filter.type)) {
    if (filter.type != layer.input.quant.type) {
      return r.unsupported("filter type {} differs from the input's {}", hal::toString(filter.type),
                           hal::toString(layer.input.quant.type));
    }
    layer.filterQuant = {.type = filter.type, .scale = filter.scale, .zeroPoint = filter.zeroPoint};
  } else {
    return r.unsupported("filter type {} is not lowered to the NPU", hal::toString(filter.type));
  }
  SABLE_ASSIGN_OR_RETURN(layer.filter, r.bytes(1, "the filter"));
  SABLE_ASSIGN_OR_RETURN(layer.bias, r.int32s(2, "the bias"));
  return {};
}

enum class ConvKind { kConv, kDepthwise, kGrouped };

// The scalar after the strides: DEPTHWISE_CONV_2D's depth multiplier, GROUPED_CONV_2D's groups.
hal::Result<void> readConvExtra(const OperationReader& r, ConvKind kind, size_t i, ConvLayer& layer) {
  if (kind == ConvKind::kDepthwise) {
    SABLE_ASSIGN_OR_RETURN(const int32_t m, r.scalar(i, "the depth multiplier"));
    layer.depthMultiplier = static_cast<uint32_t>(m);
    return {};
  }
  SABLE_ASSIGN_OR_RETURN(const int32_t groups, r.scalar(i, "the number of groups"));
  if (groups <= 0 || layer.input.c % groups != 0 || layer.output.c % groups != 0) {
    return r.unsupported("{} groups do not divide the {} input and {} output channels", groups, layer.input.c,
                         layer.output.c);
  }
  layer.groups = static_cast<uint32_t>(groups);
  return {};
}

// CONV_2D, DEPTHWISE_CONV_2D and GROUPED_CONV_2D share their operand lists up to one extra
// scalar after the strides: the depth multiplier, or the number of groups. (GROUPED_CONV_2D has
// no dilations and always a layout flag.)
hal::Result<LegalizedLayer> legalizeConvolution(const OperationReader& r, ConvKind kind) {
  const bool depthwise = kind == ConvKind::kDepthwise;
  ConvLayer layer;
  layer.depthwise = depthwise;
  SABLE_ASSIGN_OR_RETURN(layer.input, r.activation(r.input(0), "the input"));
  SABLE_ASSIGN_OR_RETURN(layer.output, r.activation(r.output(), "the output"));
  if (r.input(0).dimensions.size() != 4) return r.unsupported("the input must be 4-D");
  SABLE_TRY(readFilter(r, layer, depthwise ? 3 : 0));
  const auto& filterDims = r.input(1).dimensions;
  layer.geometry.kernelH = filterDims.at(1);
  layer.geometry.kernelW = filterDims.at(2);
  // Explicit padding has the activation at 9 (conv) / 10 (depthwise); implicit at 6 / 7. The
  // counts overlap once optional inputs are present: the implicit form has a BOOL where the
  // explicit one has a stride.
  const size_t extra = kind == ConvKind::kConv ? 0 : 1;
  const size_t count = r.inputCount();
  const bool implicit = count == 7 + extra || count == 8 + extra ||
                        (count == 10 + extra && r.input(7 + extra).type == OperandType::BOOL);
  size_t next = 0;
  if (implicit) {
    SABLE_ASSIGN_OR_RETURN(const int32_t scheme, r.scalar(3, "the padding scheme"));
    if (scheme != kPaddingSame && scheme != kPaddingValid) return r.unsupported("padding scheme {}", scheme);
    SABLE_ASSIGN_OR_RETURN(const int32_t sx, r.scalar(4, "the horizontal stride"));
    SABLE_ASSIGN_OR_RETURN(const int32_t sy, r.scalar(5, "the vertical stride"));
    layer.geometry.strideX = static_cast<uint32_t>(sx);
    layer.geometry.strideY = static_cast<uint32_t>(sy);
    next = 6;
    if (kind != ConvKind::kConv) SABLE_TRY(readConvExtra(r, kind, next++, layer));
    SABLE_ASSIGN_OR_RETURN(layer.activation, fusedActivation(r, next++));
    SABLE_TRY(requireNhwc(r, next++));
    if (count > next) {
      SABLE_ASSIGN_OR_RETURN(const int32_t dx, r.scalar(next, "the horizontal dilation"));
      SABLE_ASSIGN_OR_RETURN(const int32_t dy, r.scalar(next + 1, "the vertical dilation"));
      layer.geometry.dilationX = static_cast<uint32_t>(dx);
      layer.geometry.dilationY = static_cast<uint32_t>(dy);
    }
    implicitPadding(layer.input.h, layer.geometry.strideY, layer.geometry.kernelH, layer.geometry.dilationY, scheme,
                    &layer.geometry.padTop, &layer.geometry.padBottom);
    implicitPadding(layer.input.w, layer.geometry.strideX, layer.geometry.kernelW, layer.geometry.dilationX, scheme,
                    &layer.geometry.padLeft, &layer.geometry.padRight);
  } else {
    const char* names[] = {"the left padding", "the right padding", "the top padding", "the bottom padding",
                           "the horizontal stride", "the vertical stride"};
    int32_t v[6];
    for (size_t i = 0; i < 6; ++i) {
      SABLE_ASSIGN_OR_RETURN(v[i], r.scalar(3 + i, names[i]));
    }
    layer.geometry.padLeft = static_cast<uint32_t>(v[0]);
    layer.geometry.padRight = static_cast<uint32_t>(v[1]);
    layer.geometry.padTop = static_cast<uint32_t>(v[2]);
    layer.geometry.padBottom = static_cast<uint32_t>(v[3]);
    layer.geometry.strideX = static_cast<uint32_t>(v[4]);
    layer.geometry.strideY = static_cast<uint32_t>(v[5]);
    next = 9;
    if (kind != ConvKind::kConv) SABLE_TRY(readConvExtra(r, kind, next++, layer));
    SABLE_ASSIGN_OR_RETURN(layer.activation, fusedActivation(r, next++));
    SABLE_TRY(requireNhwc(r, next++));
    if (count > next) {
      SABLE_ASSIGN_OR_RETURN(const int32_t dx, r.scalar(next, "the horizontal dilation"));
      SABLE_ASSIGN_OR_RETURN(const int32_t dy, r.scalar(next + 1, "the vertical dilation"));
      layer.geometry.dilationX = static_cast<uint32_t>(dx);
      layer.geometry.dilationY = static_cast<uint32_t>(dy);
    }
  }
  return LegalizedLayer{.layer = std::move(layer), .inputOperands = {r.inputIndex(0)}, .outputOperand = r.outputIndex()};
}

// FULLY_CONNECTED: a 1×1 convolution of [batch, 1, 1, K] inputs.
hal::Result<LegalizedLayer> legalizeFullyConnected(const OperationReader& r) {
  ConvLayer layer;
  SABLE_ASSIGN_OR_RETURN(layer.input, r.activation(r.input(0), "the input"));
  SABLE_ASSIGN_OR_RETURN(layer.output, r.activation(r.output(), "the output"));
  const auto& weights = r.input(1).dimensions;
  if (weights.size() != 2 || weights[1] == 0) return r.unsupported("the weights must be 2-D and known");
  uint64_t elements = 1;
  for (uint32_t d : r.input(0).dimensions) elements *= d;
  const uint32_t k = weights[1];
  if (elements % k != 0) return r.unsupported("the input's {} elements are not a multiple of {}", elements, k);
  layer.input.n = static_cast<uint32_t>(elements / k);
  layer.input.h = layer.input.w = 1;
  layer.input.c = k;
  layer.output.n = layer.input.n;
  layer.output.h = layer.output.w = 1;
  layer.output.c = weights[0];
  SABLE_TRY(readFilter(r, layer, 0));
  SABLE_ASSIGN_OR_RETURN(layer.activation, fusedActivation(r, 3));
  return LegalizedLayer{.layer = std::move(layer), .inputOperands = {r.inputIndex(0)}, .outputOperand = r.outputIndex()};
}

hal::Result<LegalizedLayer> legalizePool(const OperationReader& r, bool average) {
  PoolLayer layer;
  layer.average = average;
  SABLE_ASSIGN_OR_RETURN(layer.input, r.activation(r.input(0), "the input"));
  SABLE_ASSIGN_OR_RETURN(layer.output, r.activation(r.output(), "the output"));
  if (r.input(0).dimensions.size() != 4) return r.unsupported("the input must be 4-D");
  const size_t count = r.inputCount();
  if (count == 7 || count == 8) {
    SABLE_ASSIGN_OR_RETURN(const int32_t scheme, r.scalar(1, "the padding scheme"));
    if (scheme != kPaddingSame && scheme != kPaddingValid) return r.unsupported("padding scheme {}", scheme);
    int32_t v[4];
    const char* names[] = {"the horizontal stride", "the vertical stride", "the filter width", "the filter height"};
    for (size_t i = 0; i < 4; ++i) {
      SABLE_ASSIGN_OR_RETURN(v[i], r.scalar(2 + i, names[i]));
    }
    layer.geometry.strideX = static_cast<uint32_t>(v[0]);
    layer.geometry.strideY = static_cast<uint32_t>(v[1]);
    layer.geometry.kernelW = static_cast<uint32_t>(v[2]);
    layer.geometry.kernelH = static_cast<uint32_t>(v[3]);
    SABLE_ASSIGN_OR_RETURN(layer.activation, fusedActivation(r, 6));
    SABLE_TRY(requireNhwc(r, 7));
    implicitPadding(layer.input.h, layer.geometry.strideY, layer.geometry.kernelH, 1, scheme, &layer.geometry.padTop,
                    &layer.geometry.padBottom);
    implicitPadding(layer.input.w, layer.geometry.strideX, layer.geometry.kernelW, 1, scheme, &layer.geometry.padLeft,
                    &layer.geometry.padRight);
  } else {
    int32_t v[8];
    const char* names[] = {"the left padding",      "the right padding",   "the top padding",  "the bottom padding",
                           "the horizontal stride", "the vertical stride", "the filter width", "the filter height"};
    for (size_t i = 0; i < 8; ++i) {
      SABLE_ASSIGN_OR_RETURN(v[i], r.scalar(1 + i, names[i]));
    }
    layer.geometry.padLeft = static_cast<uint32_t>(v[0]);
    layer.geometry.padRight = static_cast<uint32_t>(v[1]);
    layer.geometry.padTop = static_cast<uint32_t>(v[2]);
    layer.geometry.padBottom = static_cast<uint32_t>(v[3]);
    layer.geometry.strideX = static_cast<uint32_t>(v[4]);
    layer.geometry.strideY = static_cast<uint32_t>(v[5]);
    layer.geometry.kernelW = static_cast<uint32_t>(v[6]);
    layer.geometry.kernelH = static_cast<uint32_t>(v[7]);
    SABLE_ASSIGN_OR_RETURN(layer.activation, fusedActivation(r, 9));
    SABLE_TRY(requireNhwc(r, 10));
  }
  if (layer.input.quant.scale != layer.output.quant.scale || layer.input.quant.zeroPoint != layer.output.quant.zeroPoint) {
    return r.unsupported("pooling with different input and output quantization is not lowered");
  }
  return LegalizedLayer{.layer = std::move(layer), .inputOperands = {r.inputIndex(0)}, .outputOperand = r.outputIndex()};
}

hal::Result<LegalizedLayer> legalizeEltwise(const OperationReader& r) {
  EltwiseLayer layer;
  layer.operation = r.operation().type;
  SABLE_ASSIGN_OR_RETURN(layer.a, r.activation(r.input(0), "input A"));
  SABLE_ASSIGN_OR_RETURN(layer.b, r.activation(r.input(1), "input B"));
  SABLE_ASSIGN_OR_RETURN(layer.output, r.activation(r.output(), "the output"));
  SABLE_ASSIGN_OR_RETURN(layer.activation, fusedActivation(r, 2));
  return LegalizedLayer{
      .layer = std::move(layer), .inputOperands = {r.inputIndex(0), r.inputIndex(1)}, .outputOperand = r.outputIndex()};
}

// A byte-to-byte layer over the tensors' bytes as one flat row (any shape, dense).
LutLayer flatLut(const TensorView& in, const TensorView& out, const LutTable& table) {
  LutLayer layer{.input = in, .output = out, .table = table};
  const uint64_t bytes = uint64_t{in.n} * in.h * in.w * in.c;
  for (TensorView* v : {&layer.input, &layer.output}) {
    v->n = v->h = v->w = 1;
    v->c = static_cast<uint32_t>(bytes);
  }
  return layer;
}

// RESHAPE, SQUEEZE and EXPAND_DIMS keep the bytes and the quantization; only the shape changes.
hal::Result<LegalizedLayer> legalizeView(const OperationReader& r) {
  SABLE_ASSIGN_OR_RETURN(TensorView in, r.activation(r.input(0), "the input"));
  SABLE_ASSIGN_OR_RETURN(TensorView out, r.activation(r.output(), "the output"));
  if (in.quant.scale != out.quant.scale || in.quant.zeroPoint != out.quant.zeroPoint) {
    return r.unsupported("the output's quantization differs from the input's");
  }
  const uint64_t bytes = uint64_t{in.n} * in.h * in.w * in.c;
  if (bytes != uint64_t{out.n} * out.h * out.w * out.c || bytes > std::numeric_limits<uint32_t>::max()) {
    return r.unsupported("the output holds a different number of elements");
  }
  LutTable identity{};
  for (uint32_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<uint8_t>(i);
  return LegalizedLayer{
      .layer = flatLut(in, out, identity), .inputOperands = {r.inputIndex(0)}, .outputOperand = r.outputIndex(), .view = true};
}

// RELU, RELU1, RELU6, LOGISTIC, TANH, HARD_SWISH: a table of the byte (tables.h).
hal::Result<LegalizedLayer> legalizeActivation(const OperationReader& r) {
  SABLE_ASSIGN_OR_RETURN(TensorView in, r.activation(r.input(0), "the input"));
  SABLE_ASSIGN_OR_RETURN(TensorView out, r.activation(r.output(), "the output"));
  const uint64_t bytes = uint64_t{in.n} * in.h * in.w * in.c;
  if (bytes != uint64_t{out.n} * out.h * out.w * out.c) return r.unsupported("the output's shape differs from the input's");
  if (bytes > std::numeric_limits<uint32_t>::max()) return r.unsupported("{} elements are more than a LUT layer takes", bytes);
  const OperationType type = r.operation().type;
  const bool relu = type == OperationType::RELU || type == OperationType::RELU1 || type == OperationType::RELU6;
  if (relu && (in.quant.scale != out.quant.scale || in.quant.zeroPoint != out.quant.zeroPoint)) {
    return r.unsupported("the output's quantization differs from the input's (the reference requires them equal)");
  }
  auto table = activationTable(type, in.quant, out.quant);
  if (!table.ok()) return r.unsupported("{}", table.error().message);
  return LegalizedLayer{.layer = flatLut(in, out, *table), .inputOperands = {r.inputIndex(0)}, .outputOperand = r.outputIndex()};
}

// MEAN over the spatial axes of an NHWC tensor (axes of extent 1 may be reduced too): a
// depthwise convolution whose window is the reduced plane, with the weights and POSTPROC
// parameters that mean_requantization.h proves exact.
hal::Result<LegalizedLayer> legalizeMean(const OperationReader& r) {
  SABLE_ASSIGN_OR_RETURN(TensorView in, r.activation(r.input(0), "the input"));
  SABLE_ASSIGN_OR_RETURN(TensorView out, r.activation(r.output(), "the output"));
  SABLE_ASSIGN_OR_RETURN(const std::vector<int32_t> axes, r.int32s(1, "the axes"));
  const auto rank = static_cast<int32_t>(r.input(0).dimensions.size());
  bool reduceH = false, reduceW = false;
  for (int32_t axis : axes) {
    if (axis < -rank || axis >= rank) return r.unsupported("axis {} is outside the input's rank {}", axis, rank);
    const int32_t axis4 = (axis < 0 ? axis + rank : axis) + (4 - rank);  // in [n, h, w, c]
    const uint32_t extent = axis4 == 0 ? in.n : axis4 == 1 ? in.h : axis4 == 2 ? in.w : in.c;
    if (extent == 1) continue;
    if (axis4 == 1) {
      reduceH = true;
    } else if (axis4 == 2) {
      reduceW = true;
    } else {
      return r.unsupported("axis {} ({} elements) is not lowered: the NPU averages over the spatial axes (H, W) of "
                           "an NHWC tensor",
                           axis, extent);
    }
  }
  ConvLayer layer;
  layer.depthwise = true;
  layer.input = in;
  layer.output = in;
  layer.output.quant = out.quant;
  layer.output.h = reduceH ? 1 : in.h;
  layer.output.w = reduceW ? 1 : in.w;
  if (uint64_t{out.n} * out.h * out.w * out.c != uint64_t{layer.output.n} * layer.output.h * layer.output.w * layer.output.c) {
    return r.unsupported("the output's shape is not the input's with the reduced axes removed");
  }
  layer.geometry.kernelH = reduceH ? in.h : 1;
  layer.geometry.kernelW = reduceW ? in.w : 1;
  auto mean = meanRequantization(in.quant, out.quant, layer.geometry.kernelH * layer.geometry.kernelW);
  if (!mean.ok()) return r.unsupported("{}", mean.error().message);
  layer.filterQuant = {.type = OperandType::TENSOR_QUANT8_ASYMM, .scale = 1.0f, .zeroPoint = 0};
  layer.filter.assign(uint64_t{layer.geometry.kernelH} * layer.geometry.kernelW * in.c, mean->weight);
  layer.bias.assign(in.c, 0);
  layer.requantization = mean->lane;
  return LegalizedLayer{.layer = std::move(layer), .inputOperands = {r.inputIndex(0)}, .outputOperand = r.outputIndex()};
}

// Fills placeholder placements (region 0 input(s), 1 output) for a dry run.
void placeForDryRun(Layer& layer) {
  std::visit(
      [](auto& l) {
        using L = std::decay_t<decltype(l)>;
        if constexpr (std::is_same_v<L, EltwiseLayer>) {
          l.a.region = 0;
          l.b.region = 1;
          l.output.region = 2;
        } else {
          l.input.region = 0;
          l.output.region = 1;
        }
      },
      layer);
}

}  // namespace

hal::Result<LegalizedLayer> legalizeOperation(const hal::Model& model, uint32_t index) {
  if (index >= model.main.operations.size()) {
    return hal::invalidArgument("operation {} does not exist ({} operations)", index, model.main.operations.size());
  }
  const OperationReader r(model, index);
  switch (r.operation().type) {
    case OperationType::CONV_2D: return legalizeConvolution(r, ConvKind::kConv);
    case OperationType::DEPTHWISE_CONV_2D: return legalizeConvolution(r, ConvKind::kDepthwise);
    case OperationType::GROUPED_CONV_2D: return legalizeConvolution(r, ConvKind::kGrouped);
    case OperationType::FULLY_CONNECTED: return legalizeFullyConnected(r);
    case OperationType::AVERAGE_POOL_2D: return legalizePool(r, true);
    case OperationType::MAX_POOL_2D: return legalizePool(r, false);
    case OperationType::ADD:
    case OperationType::SUB:
    case OperationType::MUL: return legalizeEltwise(r);
    case OperationType::RESHAPE:
    case OperationType::SQUEEZE:
    case OperationType::EXPAND_DIMS: return legalizeView(r);
    case OperationType::RELU:
    case OperationType::RELU1:
    case OperationType::RELU6:
    case OperationType::LOGISTIC:
    case OperationType::TANH:
    case OperationType::HARD_SWISH: return legalizeActivation(r);
    case OperationType::MEAN: return legalizeMean(r);
    default: return r.unsupported("not lowered to the NPU");
  }
}

hal::Result<LayerStats> lowerLayer(LoweringContext& context, const Layer& layer) {
  return std::visit(
      [&](const auto& l) -> hal::Result<LayerStats> {
        using L = std::decay_t<decltype(l)>;
        if constexpr (std::is_same_v<L, ConvLayer>) return lowerConv(context, l);
        if constexpr (std::is_same_v<L, PoolLayer>) return lowerPool(context, l);
        if constexpr (std::is_same_v<L, EltwiseLayer>) return lowerEltwise(context, l);
        if constexpr (std::is_same_v<L, LutLayer>) return lowerLut(context, l);
      },
      layer);
}

std::vector<OperationSupport> supportedOperations(const hal::Model& model, const sable_hw_config& config) {
  std::vector<OperationSupport> support(model.main.operations.size());
  for (uint32_t i = 0; i < support.size(); ++i) {
    auto legalized = legalizeOperation(model, i);
    if (!legalized.ok()) {
      support[i].reason = legalized.error().message;
      continue;
    }
    placeForDryRun(legalized->layer);
    CommandBuilder builder(config);
    ConstantPool constants(3);
    LoweringContext context{.builder = builder, .constants = constants, .config = config};
    auto lowered = lowerLayer(context, legalized->layer);
    if (lowered.ok()) {
      auto stream = builder.finish();
      if (stream.ok()) {
        support[i].supported = true;
      } else {
        support[i].reason = fmt::format("operation {} ({}): {}", i, hal::toString(model.main.operations[i].type),
                                        stream.error().message);
      }
    } else {
      support[i].reason = fmt::format("operation {} ({}): {}", i, hal::toString(model.main.operations[i].type),
                                      lowered.error().message);
    }
  }
  return support;
}

}  // namespace sable::umd::compiler
