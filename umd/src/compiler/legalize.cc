// Legalization of NNAPI operations into NPU layers (legalize.h). The operand lists follow the
// NNAPI signatures (hal/src/operation_signatures.cc); the model is validated before it gets
// here, so a malformed operation is an internal error rather than a user-facing one.
#include "sable/umd/compiler/legalize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>
#include <limits>

#include <fmt/format.h>

#include "lowerings.h"
#include "mean_requantization.h"
#include "movement.h"
#include "sable/hal/operand_data.h"
#include "sable/umd/compiler/bound_inputs.h"
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

  const hal::Model& model() const { return model_; }
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
  // A FLOAT32 constant scalar.
  hal::Result<float> realScalar(size_t i, const char* what) const {
    if (input(i).type != OperandType::FLOAT32) {
      return unsupported("{} (input {}) is {}, not FLOAT32", what, i, hal::toString(input(i).type));
    }
    const auto data = hal::constantBytes(model_, input(i));
    if (!data || data->size() != sizeof(float)) return unsupported("{} (input {}) must be a constant", what, i);
    float value = 0.0f;
    std::memcpy(&value, data->data(), sizeof value);
    return value;
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
    SABLE_TRY(quant8WithKnownShape(operand, what));
    if (operand.dimensions.empty() || operand.dimensions.size() > 4) {
      return unsupported("{} has rank {}: the NPU takes ranks 1 to 4", what, operand.dimensions.size());
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
  // An operand of a byte-to-byte layer (LutLayer), which sees any tensor as one flat row of its
  // bytes: quant8, fully known shape, any rank.
  hal::Result<TensorView> flat(const Operand& operand, const char* what) const {
    SABLE_TRY(quant8WithKnownShape(operand, what));
    uint64_t elements = 1;
    for (uint32_t d : operand.dimensions) elements *= d;
    if (elements > std::numeric_limits<uint32_t>::max()) {
      return unsupported("{} has {} elements, more than a LUT layer takes", what, elements);
    }
    TensorView view;
    view.c = static_cast<uint32_t>(elements);
    view.quant = {.type = operand.type, .scale = operand.scale, .zeroPoint = operand.zeroPoint};
    return view;
  }

 private:
  hal::Result<void> quant8WithKnownShape(const Operand& operand, const char* what) const {
    if (!isQuant8Activation(operand.type)) {
      return unsupported("{} is {}: the NPU runs TENSOR_QUANT8_ASYMM and TENSOR_QUANT8_ASYMM_SIGNED tensors",
                         what, hal::toString(operand.type));
    }
    for (uint32_t d : operand.dimensions) {
      if (d == 0) return unsupported("{} has an unknown dimension: the NPU needs shapes known at compile time", what);
    }
    return {};
  }

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

// The data-layout flag at input i (absent: NHWC). An NCHW operation's views were read in NCHW
// order ([N, C, H, W] as n, h, w, c); they become their NHWC shapes, and the layout pass transposes
// the tensors around the layer (lowerLegalized).
hal::Result<bool> readLayout(const OperationReader& r, size_t i, TensorView& input, TensorView& output) {
  if (r.inputCount() <= i) return false;
  SABLE_ASSIGN_OR_RETURN(const int32_t nchw, r.scalar(i, "the data layout"));
  if (nchw == 0) return false;
  for (TensorView* v : {&input, &output}) {
    const TensorView read = *v;
    v->h = read.w;
    v->w = read.c;
    v->c = read.h;
  }
  return true;
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
  if (groups <= 0) return r.unsupported("{} groups", groups);
  layer.groups = static_cast<uint32_t>(groups);  // divides the channels? checked after the layout
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
  bool nchw = false;
  const auto& filterDims = r.input(1).dimensions;
  layer.geometry.kernelH = filterDims.at(1);
  layer.geometry.kernelW = filterDims.at(2);
  // Explicit padding has the activation at 9 (conv) / 10 (depthwise, grouped); implicit at 6 / 7. The
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
    SABLE_ASSIGN_OR_RETURN(nchw, readLayout(r, next++, layer.input, layer.output));
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
    SABLE_ASSIGN_OR_RETURN(nchw, readLayout(r, next++, layer.input, layer.output));
    if (count > next) {
      SABLE_ASSIGN_OR_RETURN(const int32_t dx, r.scalar(next, "the horizontal dilation"));
      SABLE_ASSIGN_OR_RETURN(const int32_t dy, r.scalar(next + 1, "the vertical dilation"));
      layer.geometry.dilationX = static_cast<uint32_t>(dx);
      layer.geometry.dilationY = static_cast<uint32_t>(dy);
    }
  }
  if (layer.input.c % layer.groups != 0 || layer.output.c % layer.groups != 0) {
    return r.unsupported("{} groups do not divide the {} input and {} output channels", layer.groups, layer.input.c,
                         layer.output.c);
  }
  return LegalizedLayer{
      .layer = std::move(layer), .inputOperands = {r.inputIndex(0)}, .outputOperand = r.outputIndex(), .nchw = nchw};
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
  bool nchw = false;
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
    SABLE_ASSIGN_OR_RETURN(nchw, readLayout(r, 7, layer.input, layer.output));
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
    SABLE_ASSIGN_OR_RETURN(nchw, readLayout(r, 10, layer.input, layer.output));
  }
  if (layer.input.quant.scale != layer.output.quant.scale || layer.input.quant.zeroPoint != layer.output.quant.zeroPoint) {
    return r.unsupported("pooling with different input and output quantization is not lowered");
  }
  return LegalizedLayer{
      .layer = std::move(layer), .inputOperands = {r.inputIndex(0)}, .outputOperand = r.outputIndex(), .nchw = nchw};
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

// RESHAPE, SQUEEZE and EXPAND_DIMS keep the bytes and the quantization; only the shape changes.
hal::Result<LegalizedLayer> legalizeView(const OperationReader& r) {
  SABLE_ASSIGN_OR_RETURN(TensorView in, r.flat(r.input(0), "the input"));
  SABLE_ASSIGN_OR_RETURN(TensorView out, r.flat(r.output(), "the output"));
  if (in.quant.scale != out.quant.scale || in.quant.zeroPoint != out.quant.zeroPoint) {
    return r.unsupported("the output's quantization differs from the input's");
  }
  if (in.c != out.c) return r.unsupported("the output holds a different number of elements");
  LutLayer layer{.input = in, .output = out, .table = identityTable()};
  return LegalizedLayer{
      .layer = std::move(layer), .inputOperands = {r.inputIndex(0)}, .outputOperand = r.outputIndex(), .view = true};
}

// A requantization as the TFLite delegate maps it, DEQUANTIZE to float32 then QUANTIZE: the NPU
// has no float tensors, so the pair is one LUT layer (dequantizeQuantizeTable). The DEQUANTIZE is a
// view of its input (nothing runs) when its float output is read only by QUANTIZEs and is not a
// model output; each such QUANTIZE reads the DEQUANTIZE's input through the composed table.
hal::Result<LegalizedLayer> legalizeDequantize(const OperationReader& r) {
  SABLE_ASSIGN_OR_RETURN(TensorView in, r.flat(r.input(0), "the input"));
  if (r.output().type != OperandType::TENSOR_FLOAT32) {
    return r.unsupported("the output is {}: the NPU has no float tensors (a DEQUANTIZE read only by QUANTIZEs to "
                         "8 bits runs as their table)",
                         hal::toString(r.output().type));
  }
  if (r.input(0).lifetime == hal::OperandLifeTime::CONSTANT_COPY ||
      r.input(0).lifetime == hal::OperandLifeTime::CONSTANT_REFERENCE) {
    return r.unsupported("the input is a constant");
  }
  const hal::Subgraph& main = r.model().main;
  const uint32_t real = r.outputIndex();
  if (std::find(main.outputIndexes.begin(), main.outputIndexes.end(), real) != main.outputIndexes.end()) {
    return r.unsupported("its float output is a model output: the NPU has no float tensors");
  }
  uint32_t readers = 0;
  for (const hal::Operation& op : main.operations) {
    if (std::find(op.inputs.begin(), op.inputs.end(), real) == op.inputs.end()) continue;
    ++readers;
    if (op.type != OperationType::QUANTIZE || !isQuant8Activation(main.operands.at(op.outputs.at(0)).type)) {
      return r.unsupported("its float output is read by {}: the NPU has no float tensors, only a QUANTIZE to 8 bits "
                           "after it runs (as a table)",
                           hal::toString(op.type));
    }
  }
  if (readers == 0) return r.unsupported("its float output is not read");
  TensorView out = in;  // the bytes stay the input's: the QUANTIZEs read them
  LutLayer layer{.input = in, .output = out, .table = identityTable()};
  return LegalizedLayer{
      .layer = std::move(layer), .inputOperands = {r.inputIndex(0)}, .outputOperand = r.outputIndex(), .view = true};
}

hal::Result<LegalizedLayer> legalizeQuantize(const OperationReader& r) {
  const hal::Subgraph& main = r.model().main;
  const uint32_t real = r.inputIndex(0);
  const auto producer = std::find_if(main.operations.begin(), main.operations.end(), [real](const hal::Operation& op) {
    return !op.outputs.empty() && op.outputs[0] == real;
  });
  if (producer == main.operations.end() || producer->type != OperationType::DEQUANTIZE) {
    return r.unsupported("the input is float and not made by a DEQUANTIZE: the NPU has no float tensors (a "
                         "DEQUANTIZE → QUANTIZE pair runs as one table)");
  }
  const auto dequantize = static_cast<uint32_t>(producer - main.operations.begin());
  const OperationReader source(r.model(), dequantize);
  if (auto pair = legalizeDequantize(source); !pair.ok()) {
    return r.unsupported("its DEQUANTIZE does not run on the NPU: {}", pair.error().message);
  }
  SABLE_ASSIGN_OR_RETURN(TensorView in, source.flat(source.input(0), "the DEQUANTIZE's input"));
  SABLE_ASSIGN_OR_RETURN(TensorView out, r.flat(r.output(), "the output"));
  if (in.c != out.c) return r.unsupported("the output's shape differs from the input's");
  auto table = dequantizeQuantizeTable(in.quant, out.quant);
  if (!table.ok()) return r.unsupported("{}", table.error().message);
  return LegalizedLayer{.layer = LutLayer{.input = in, .output = out, .table = *table},
                        .inputOperands = {source.inputIndex(0)},
                        .outputOperand = r.outputIndex()};
}

// ARGMAX over the last axis (lower_argmax.cc): the input as [n, h, w, c] with c the reduced axis,
// the int32 output as its bytes [n, h, w, 4].
hal::Result<LegalizedLayer> legalizeArgmax(const OperationReader& r) {
  const Operand& input = r.input(0);
  const auto rank = static_cast<int32_t>(input.dimensions.size());
  SABLE_ASSIGN_OR_RETURN(int32_t axis, r.scalar(1, "the axis"));
  if (axis < -rank || axis >= rank) return r.unsupported("axis {} is outside a rank-{} input", axis, rank);
  if (axis < 0) axis += rank;
  if (axis != rank - 1) return r.unsupported("axis {} is not the last: the NPU reduces the channels", axis);
  if (rank > 4) return r.unsupported("the input has rank {}: the NPU takes ranks 1 to 4", rank);
  SABLE_ASSIGN_OR_RETURN(TensorView in, r.activation(input, "the input"));
  const Operand& output = r.output();
  if (output.type != OperandType::TENSOR_INT32) {
    return r.unsupported("the output is {}, not TENSOR_INT32", hal::toString(output.type));
  }
  std::vector<uint32_t> expected(input.dimensions.begin(), input.dimensions.end() - 1);
  if (expected.empty()) expected.push_back(1);
  if (output.dimensions != expected) return r.unsupported("the output's shape is not the input's without the axis");
  TensorView out = in;
  out.c = 4;
  out.quant = {.type = OperandType::TENSOR_QUANT8_ASYMM, .scale = 1.0f, .zeroPoint = 0};
  ArgmaxLayer layer{.input = in, .output = out, .work = {}};
  if (auto exact = argmaxExact(layer); !exact.ok()) return r.unsupported("{}", exact.error().message);
  const uint64_t work = argmaxWorkBytes(layer);
  return LegalizedLayer{.layer = std::move(layer),
                        .inputOperands = {r.inputIndex(0)},
                        .outputOperand = r.outputIndex(),
                        .workBytes = work};
}

// RELU, RELU1, RELU6, LOGISTIC, TANH, HARD_SWISH: a table of the byte (tables.h).
hal::Result<LegalizedLayer> legalizeActivation(const OperationReader& r) {
  SABLE_ASSIGN_OR_RETURN(TensorView in, r.flat(r.input(0), "the input"));
  SABLE_ASSIGN_OR_RETURN(TensorView out, r.flat(r.output(), "the output"));
  if (in.c != out.c) return r.unsupported("the output's shape differs from the input's");
  const OperationType type = r.operation().type;
  const bool relu = type == OperationType::RELU || type == OperationType::RELU1 || type == OperationType::RELU6;
  if (relu && (in.quant.scale != out.quant.scale || in.quant.zeroPoint != out.quant.zeroPoint)) {
    return r.unsupported("the output's quantization differs from the input's (the reference requires them equal)");
  }
  auto table = activationTable(type, in.quant, out.quant);
  if (!table.ok()) return r.unsupported("{}", table.error().message);
  return LegalizedLayer{
      .layer = LutLayer{.input = in, .output = out, .table = *table}, .inputOperands = {r.inputIndex(0)},
      .outputOperand = r.outputIndex()};
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

// ---- Data movement (movement.h) --------------------------------------------------------------

// An optional BOOL input (absent or omitted: false).
hal::Result<bool> optionalFlag(const OperationReader& r, size_t i, const char* what) {
  if (r.inputCount() <= i) return false;
  SABLE_ASSIGN_OR_RETURN(const int32_t value, r.scalar(i, what));
  return value != 0;
}

// A view's dimension along NNAPI axis `axis` of a rank-`rank` operand, in the 4-D view's order.
uint32_t& viewAxis(TensorView& v, size_t rank, size_t axis) {
  uint32_t* dims[] = {&v.n, &v.h, &v.w, &v.c};
  return *dims[4 - rank + axis];
}

LegalizedLayer moveOf(const OperationReader& r, MoveLayer layer, bool nchw = false) {
  return LegalizedLayer{
      .layer = std::move(layer), .inputOperands = {r.inputIndex(0)}, .outputOperand = r.outputIndex(), .nchw = nchw};
}

// CONCATENATION: each input placed at its offset along the axis; an input of another quantization
// goes through the reference's requantization (tables.h requantizeTable).
hal::Result<LegalizedLayer> legalizeConcatenation(const OperationReader& r) {
  const size_t count = r.inputCount() - 1;
  SABLE_ASSIGN_OR_RETURN(const int32_t axisValue, r.scalar(count, "the axis"));
  MoveLayer layer;
  SABLE_ASSIGN_OR_RETURN(layer.output, r.activation(r.output(), "the output"));
  const size_t rank = r.output().dimensions.size();
  if (axisValue < 0 || static_cast<size_t>(axisValue) >= rank) {
    return r.unsupported("axis {} is outside [0, {})", axisValue, rank);
  }
  const auto axis = static_cast<size_t>(axisValue);
  layer.tables.push_back(identityTable());
  LegalizedLayer legalized;
  uint32_t position = 0;
  for (size_t i = 0; i < count; ++i) {
    const std::string name = fmt::format("input {}", i);
    SABLE_ASSIGN_OR_RETURN(TensorView in, r.activation(r.input(i), name.c_str()));
    if (in.quant.type != layer.output.quant.type || r.input(i).dimensions.size() != rank) {
      return r.unsupported("input {} differs from the output in type or rank", i);
    }
    for (size_t a = 0; a < rank; ++a) {
      if (a != axis && viewAxis(in, rank, a) != viewAxis(layer.output, rank, a)) {
        return r.unsupported("input {} differs from the output on axis {}, which is not the concatenation's", i, a);
      }
    }
    uint32_t table = 0;
    if (in.quant.scale != layer.output.quant.scale || in.quant.zeroPoint != layer.output.quant.zeroPoint) {
      SABLE_ASSIGN_OR_RETURN(const LutTable requantize, requantizeTable(in.quant, layer.output.quant));
      const auto same = std::find(layer.tables.begin(), layer.tables.end(), requantize);
      table = static_cast<uint32_t>(same - layer.tables.begin());
      if (same == layer.tables.end()) layer.tables.push_back(requantize);
    }
    TensorView origin = in;  // where the input starts, as a view's dimensions
    origin.n = origin.h = origin.w = origin.c = 0;
    viewAxis(origin, rank, axis) = position;
    if (axis + 1 == rank) legalized.channelOffsets.push_back(position);
    position += viewAxis(in, rank, axis);
    appendPlacement(in, layer.output, {origin.n, origin.h, origin.w, origin.c}, static_cast<uint32_t>(i), table,
                    layer.copies);
    layer.inputs.push_back(in);
    legalized.inputOperands.push_back(r.inputIndex(i));
  }
  if (position != viewAxis(layer.output, rank, axis)) {
    return r.unsupported("the inputs' {} elements along axis {} differ from the output's {}", position, axis,
                         viewAxis(layer.output, rank, axis));
  }
  legalized.layer = std::move(layer);
  legalized.outputOperand = r.outputIndex();
  return legalized;
}

// PAD (the input's zero point) and PAD_V2 (the given value, narrowed to a byte as the reference
// does).
hal::Result<LegalizedLayer> legalizePad(const OperationReader& r) {
  SABLE_ASSIGN_OR_RETURN(TensorView in, r.activation(r.input(0), "the input"));
  SABLE_ASSIGN_OR_RETURN(TensorView out, r.activation(r.output(), "the output"));
  const size_t rank = r.input(0).dimensions.size();
  SABLE_ASSIGN_OR_RETURN(const std::vector<int32_t> paddings, r.int32s(1, "the paddings"));
  if (paddings.size() != 2 * rank) return r.unsupported("{} paddings for rank {}", paddings.size(), rank);
  TensorView before = in;  // the padding before each axis, as a view's dimensions
  before.n = before.h = before.w = before.c = 0;
  for (size_t a = 0; a < rank; ++a) {
    const int32_t head = paddings[2 * a], tail = paddings[2 * a + 1];
    if (head < 0 || tail < 0) return r.unsupported("paddings ({}, {}) of axis {} must be >= 0", head, tail, a);
    viewAxis(before, rank, a) = static_cast<uint32_t>(head);
    if (uint64_t{viewAxis(in, rank, a)} + head + tail != viewAxis(out, rank, a)) {
      return r.unsupported("the output's axis {} is not the padded input's", a);
    }
  }
  int32_t fill = in.quant.zeroPoint;
  if (r.operation().type == OperationType::PAD_V2) {
    SABLE_ASSIGN_OR_RETURN(fill, r.scalar(2, "the pad value"));
  }
  return moveOf(r, padLayer(in, out, {before.n, before.h, before.w, before.c}, static_cast<uint8_t>(fill)));
}

// DEPTH_TO_SPACE and SPACE_TO_DEPTH: [N, H, W, b²·D] ↔ [N, H·b, W·b, D].
hal::Result<LegalizedLayer> legalizeDepthSpace(const OperationReader& r, bool toSpace) {
  SABLE_ASSIGN_OR_RETURN(TensorView in, r.activation(r.input(0), "the input"));
  SABLE_ASSIGN_OR_RETURN(TensorView out, r.activation(r.output(), "the output"));
  if (r.input(0).dimensions.size() != 4) return r.unsupported("the input must be 4-D");
  SABLE_ASSIGN_OR_RETURN(const int32_t block, r.scalar(1, "the block size"));
  SABLE_ASSIGN_OR_RETURN(const bool nchw, readLayout(r, 2, in, out));
  const TensorView& deep = toSpace ? in : out;
  const TensorView& spatial = toSpace ? out : in;
  const auto b = static_cast<uint64_t>(std::max(block, 0));
  if (b == 0 || deep.n != spatial.n || uint64_t{deep.h} * b != spatial.h || uint64_t{deep.w} * b != spatial.w ||
      uint64_t{spatial.c} * b * b != deep.c) {
    return r.unsupported("block size {} does not map the input's shape onto the output's", block);
  }
  const auto bs = static_cast<uint32_t>(b);
  return moveOf(r, toSpace ? depthToSpaceLayer(in, out, bs) : spaceToDepthLayer(in, out, bs), nchw);
}

// RESIZE_NEAREST_NEIGHBOR (a move layer: the source rows and columns are the reference's) and
// RESIZE_BILINEAR (lower_resize.cc): the output's size is its operand's shape.
hal::Result<LegalizedLayer> legalizeResize(const OperationReader& r, bool bilinear) {
  SABLE_ASSIGN_OR_RETURN(TensorView in, r.activation(r.input(0), "the input"));
  SABLE_ASSIGN_OR_RETURN(TensorView out, r.activation(r.output(), "the output"));
  if (r.input(0).dimensions.size() != 4) return r.unsupported("the input must be 4-D");
  SABLE_ASSIGN_OR_RETURN(const bool nchw, readLayout(r, 3, in, out));
  SABLE_ASSIGN_OR_RETURN(const bool alignCorners, optionalFlag(r, 4, "align_corners"));
  SABLE_ASSIGN_OR_RETURN(const bool halfPixelCenters, optionalFlag(r, 5, "half_pixel_centers"));
  if (alignCorners && halfPixelCenters) return r.unsupported("align_corners and half_pixel_centers are both set");
  if (in.n != out.n || in.c != out.c) return r.unsupported("the output's batches or channels differ from the input's");
  // The output's size is what the size or scale inputs give, as the reference computes it.
  for (const auto& [index, inSize, outSize] : {std::tuple{size_t{1}, in.w, out.w}, std::tuple{size_t{2}, in.h, out.h}}) {
    const char* what = index == 1 ? "the output width" : "the output height";
    int64_t size = 0;
    if (r.input(index).type == OperandType::INT32) {
      SABLE_ASSIGN_OR_RETURN(size, r.scalar(index, what));
    } else if (r.input(index).type == OperandType::FLOAT32) {
      SABLE_ASSIGN_OR_RETURN(const std::vector<uint8_t> raw, r.bytes(index, what));
      float scale = 0.0f;
      if (raw.size() != sizeof scale) return r.unsupported("{} is not one FLOAT32", what);
      std::memcpy(&scale, raw.data(), sizeof scale);
      const float scaled = std::floor(static_cast<float>(inSize) * scale);
      // Checked before the conversion, which NaN or infinity would make undefined.
      if (!(scaled >= 0.0f && scaled <= static_cast<float>(outSize))) {
        return r.unsupported("{} scale {} does not give the output operand's {}", what, scale, outSize);
      }
      size = static_cast<int64_t>(scaled);
    } else {
      return r.unsupported("{} is {}, not INT32 or FLOAT32", what, hal::toString(r.input(index).type));
    }
    if (size != outSize) return r.unsupported("{} is {}, but the output operand has {}", what, size, outSize);
  }
  if (!bilinear) return moveOf(r, resizeNearestLayer(in, out, alignCorners, halfPixelCenters), nchw);
  ResizeBilinearLayer layer{
      .input = in, .output = out, .alignCorners = alignCorners, .halfPixelCenters = halfPixelCenters};
  if (auto exact = resizeBilinearExact(layer); !exact.ok()) return r.unsupported("{}", exact.error().message);
  return LegalizedLayer{
      .layer = std::move(layer), .inputOperands = {r.inputIndex(0)}, .outputOperand = r.outputIndex(), .nchw = nchw};
}

// SOFTMAX along the last axis with a constant beta > 0; the output quantization NNAPI requires is
// checked by lowerSoftmax.
hal::Result<LegalizedLayer> legalizeSoftmax(const OperationReader& r) {
  SoftmaxLayer layer;
  SABLE_ASSIGN_OR_RETURN(layer.input, r.activation(r.input(0), "the input"));
  SABLE_ASSIGN_OR_RETURN(layer.output, r.activation(r.output(), "the output"));
  SABLE_ASSIGN_OR_RETURN(const float beta, r.realScalar(1, "beta"));
  if (!(beta > 0.0f)) return r.unsupported("beta must be positive, it is {}", beta);
  const auto rank = static_cast<int32_t>(r.input(0).dimensions.size());
  bool transposed = false;
  if (r.inputCount() > 2) {
    SABLE_ASSIGN_OR_RETURN(int32_t axis, r.scalar(2, "the axis"));
    if (axis < -rank || axis >= rank) return r.unsupported("axis {} is outside a rank-{} input", axis, rank);
    if (axis < 0) axis += rank;
    if (axis != rank - 1) {
      // The tensor is [outer, A, inner] with A the axis: the layout pass's transposes, which take
      // an NCHW [n, C, 1, W] tensor to NHWC [n, 1, W, C] and back, bring A last for the command.
      const auto& dims = r.input(0).dimensions;
      uint64_t outer = 1, inner = 1;
      for (int32_t d = 0; d < axis; ++d) outer *= dims[d];
      for (int32_t d = axis + 1; d < rank; ++d) inner *= dims[d];
      for (TensorView* v : {&layer.input, &layer.output}) {
        v->n = static_cast<uint32_t>(outer);
        v->h = 1;
        v->w = static_cast<uint32_t>(inner);
        v->c = dims[axis];
      }
      transposed = true;
    }
  }
  auto table = softmaxTable(beta, layer.input.quant.scale);
  if (!table.ok()) return r.unsupported("{}", table.error().message);
  layer.table = *table;
  return LegalizedLayer{.layer = std::move(layer),
                        .inputOperands = {r.inputIndex(0)},
                        .outputOperand = r.outputIndex(),
                        .nchw = transposed};
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
        } else if constexpr (std::is_same_v<L, MoveLayer>) {
          for (TensorView& in : l.inputs) in.region = 0;
          l.output.region = 1;
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
    case OperationType::CONCATENATION: return legalizeConcatenation(r);
    case OperationType::PAD:
    case OperationType::PAD_V2: return legalizePad(r);
    case OperationType::DEPTH_TO_SPACE: return legalizeDepthSpace(r, true);
    case OperationType::SPACE_TO_DEPTH: return legalizeDepthSpace(r, false);
    case OperationType::RESIZE_NEAREST_NEIGHBOR: return legalizeResize(r, false);
    case OperationType::RESIZE_BILINEAR: return legalizeResize(r, true);
    case OperationType::SOFTMAX: return legalizeSoftmax(r);
    case OperationType::DEQUANTIZE: return legalizeDequantize(r);
    case OperationType::QUANTIZE: return legalizeQuantize(r);
    case OperationType::ARGMAX: return legalizeArgmax(r);
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
        if constexpr (std::is_same_v<L, MoveLayer>) return lowerMove(context, l);
        if constexpr (std::is_same_v<L, SoftmaxLayer>) return lowerSoftmax(context, l);
        if constexpr (std::is_same_v<L, ResizeBilinearLayer>) return lowerResizeBilinear(context, l);
        if constexpr (std::is_same_v<L, ArgmaxLayer>) return lowerArgmax(context, l);
      },
      layer);
}

namespace {

// The views an NCHW layer's layout concerns: its first input and its output.
std::pair<TensorView*, TensorView*> layoutViews(Layer& layer) {
  return std::visit(
      [](auto& l) -> std::pair<TensorView*, TensorView*> {
        using L = std::decay_t<decltype(l)>;
        if constexpr (std::is_same_v<L, EltwiseLayer>) {
          return {&l.a, &l.output};
        } else if constexpr (std::is_same_v<L, MoveLayer>) {
          return {&l.inputs.at(0), &l.output};
        } else {
          return {&l.input, &l.output};
        }
      },
      layer);
}

uint64_t bytesOf(const TensorView& v) { return uint64_t{v.n} * v.h * v.w * v.c; }

}  // namespace

std::pair<uint64_t, uint64_t> layoutBufferBytes(const LegalizedLayer& legalized) {
  if (!legalized.nchw) return {0, 0};
  Layer layer = legalized.layer;
  const auto [input, output] = layoutViews(layer);
  return {bytesOf(*input), bytesOf(*output)};
}

hal::Result<LayerStats> lowerLegalized(LoweringContext& context, const LegalizedLayer& legalized,
                                       const LayoutBuffers& buffers) {
  if (const auto* argmax = std::get_if<ArgmaxLayer>(&legalized.layer)) {
    ArgmaxLayer placed = *argmax;
    placed.work.region = buffers.region;
    placed.work.offset = buffers.workOffset;
    return lowerArgmax(context, placed);
  }
  if (!legalized.nchw) return lowerLayer(context, legalized.layer);
  // The layout pass: the NCHW input transposed into an NHWC buffer, the layer between NHWC
  // buffers, its output transposed back into the NCHW output.
  Layer layer = legalized.layer;
  const auto [input, output] = layoutViews(layer);
  const TensorView nchwInput = nchwViewOf(*input), nchwOutput = nchwViewOf(*output);
  const auto intoBuffer = [&buffers](TensorView* view, uint64_t offset) {
    view->region = buffers.region;
    view->offset = offset;
    view->pixelStride = 0;
  };
  LayerStats total;
  if (buffers.transposeInput) {
    intoBuffer(input, buffers.inputOffset);
    SABLE_ASSIGN_OR_RETURN(const LayerStats in, lowerMove(context, nchwToNhwcLayer(nchwInput, *input)));
    accumulate(total, in);
  }
  if (buffers.transposeOutput) intoBuffer(output, buffers.outputOffset);
  SABLE_ASSIGN_OR_RETURN(const LayerStats main, lowerLayer(context, layer));
  accumulate(total, main);
  if (buffers.transposeOutput) {
    SABLE_ASSIGN_OR_RETURN(const LayerStats out, lowerMove(context, nhwcToNchwLayer(*output, nchwOutput)));
    accumulate(total, out);
  }
  return total;
}

std::vector<OperationSupport> supportedOperations(const hal::Model& original, const sable_hw_config& config) {
  // Filters and biases that are model inputs are bound at execution (bound_inputs.h); whether the
  // layer lowers does not depend on their values.
  const auto bound = bindWeightInputsToZeros(original);
  const hal::Model& model = bound.ok() ? *bound : original;
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
    auto lowered = lowerLegalized(context, *legalized, {.region = 4});
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
