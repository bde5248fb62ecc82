// Operation validation against every NNAPI signature (see validation.h).
//
// Each operation type has a table of signatures: the operand type at every input and output
// position and the lowest HAL version able to express it. Optional trailing inputs (data layout,
// dilation, align_corners...) are declared once as "tails" and expanded into one signature per
// accepted prefix, so the table reads like the HAL documentation. Rules that a type table cannot
// express (per-channel quantization axes, quantization parameters that raise the version) live
// in small per-operation checks next to the table.
//
// Matching walks the positions in order, keeping the signatures that still agree; the first
// position where no signature agrees names what was expected there. Whatever survives matches
// every position, and the lowest version among the survivors is the answer.
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sable/hal/extensions.h"
#include "sable/hal/operand_data.h"
#include "sable/hal/shared_memory.h"
#include "sable/hal/validation.h"

namespace sable::hal {
namespace {

using Types = std::vector<OperandType>;

// Short names keep the signature table as compact as the HAL documentation tables.
namespace t {
constexpr OperandType F32 = OperandType::TENSOR_FLOAT32;
constexpr OperandType F16 = OperandType::TENSOR_FLOAT16;
constexpr OperandType I32 = OperandType::TENSOR_INT32;
constexpr OperandType Q8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType Q8S = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr OperandType QPC = OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
constexpr OperandType Q8SYMM = OperandType::TENSOR_QUANT8_SYMM;
constexpr OperandType Q16S = OperandType::TENSOR_QUANT16_SYMM;
constexpr OperandType Q16A = OperandType::TENSOR_QUANT16_ASYMM;
constexpr OperandType B8 = OperandType::TENSOR_BOOL8;
constexpr OperandType INT = OperandType::INT32;
constexpr OperandType FLT = OperandType::FLOAT32;
constexpr OperandType HLF = OperandType::FLOAT16;
constexpr OperandType BOOL = OperandType::BOOL;
constexpr OperandType SUBGRAPH = OperandType::SUBGRAPH;
// Any operand type: the data operands of IF and WHILE, whose types the referenced subgraphs
// fix (checked by the model validator).
constexpr OperandType ANY = static_cast<OperandType>(-1);
}  // namespace t

constexpr HalVersion V1_0 = HalVersion::V1_0;
constexpr HalVersion V1_1 = HalVersion::V1_1;
constexpr HalVersion V1_2 = HalVersion::V1_2;
constexpr HalVersion V1_3 = HalVersion::V1_3;

HalVersion later(HalVersion a, HalVersion b) { return std::max(a, b); }

// Optional trailing inputs: each tail is accepted only after all the tails before it. A tail
// whose operands are constants holding `defaults` says nothing the shorter signature cannot say
// (NHWC layout, dilation 1, last axis, align_corners false), so it does not raise the version:
// the operation can be expressed at the lower version by dropping it.
constexpr int32_t kLastAxis = std::numeric_limits<int32_t>::min();  // -1 or rank - 1 of input 0
struct Tail {
  Types inputs;
  HalVersion version;
  std::vector<int32_t> defaults;  // empty: the tail always needs its version
};

const Tail kLayoutTail = {{t::BOOL}, V1_2, {0}};
const Tail kDilationTail = {{t::INT, t::INT}, V1_2, {1, 1}};
const Tail kAxisTail = {{t::INT}, V1_2, {kLastAxis}};
const Tail kResizeFlagsTail = {{t::BOOL, t::BOOL}, V1_3, {0, 0}};

struct Signature {
  HalVersion version = V1_0;  // without the tails
  Types inputs;
  Types outputs;
  // A variadic position repeats its type to fill the operation's count (CONCATENATION inputs,
  // SPLIT outputs, IF/WHILE data operands), at least `min...Repeats` times.
  std::optional<size_t> variadicInput;
  size_t minInputRepeats = 1;
  std::optional<size_t> variadicOutput;
  size_t minOutputRepeats = 1;
  // The optional tails included in `inputs`, which start at position tailsBegin.
  std::vector<Tail> tails;
  size_t tailsBegin = 0;
};

struct TypeSince {
  OperandType type;
  HalVersion version;
};
using TypeSet = std::vector<TypeSince>;

struct RankRule {
  bool isOutput;
  uint32_t position;
  uint32_t rank;
};

using ExtraCheck = Result<HalVersion> (*)(const Subgraph&, const Operation&, HalVersion matched);

struct OperationEntry {
  bool known = false;
  std::vector<Signature> signatures;
  // Ranks the HAL states; checked when the operand's rank is known (dimensions non-empty).
  std::vector<RankRule> ranks;
  ExtraCheck extra = nullptr;

  void add(HalVersion version, Types inputs, Types outputs, const std::vector<Tail>& tails = {}) {
    known = true;
    Signature signature{version, std::move(inputs), std::move(outputs), {}, 1, {}, 1, {}, 0};
    signature.tailsBegin = signature.inputs.size();
    signatures.push_back(signature);
    for (const Tail& tail : tails) {
      signature.inputs.insert(signature.inputs.end(), tail.inputs.begin(), tail.inputs.end());
      signature.tails.push_back(tail);
      signatures.push_back(signature);
    }
  }
  void add(Signature signature) {
    known = true;
    signatures.push_back(std::move(signature));
  }
};

TypeSet cat2(TypeSet a, const TypeSet& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Types repeat(OperandType type, size_t count) { return Types(count, type); }

Types cat(std::initializer_list<Types> parts) {
  Types all;
  for (const Types& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

// The scalar type of a float parameter goes with the tensor type: FLOAT16 for TENSOR_FLOAT16,
// FLOAT32 for everything else (quantized operations take float32 parameters).
OperandType floatScalarFor(OperandType tensor) { return tensor == t::F16 ? t::HLF : t::FLT; }

// The type sets that recur across the HAL: most 1.0 operations gained float16 in 1.2 and quant8
// signed in 1.3; most 1.2 operations take float32, float16, int32 and quant8 from the start.
const TypeSet kCore = {{t::F32, V1_0}, {t::Q8, V1_0}, {t::F16, V1_2}, {t::Q8S, V1_3}};
const TypeSet kCore11 = {{t::F32, V1_1}, {t::Q8, V1_1}, {t::F16, V1_2}, {t::Q8S, V1_3}};
const TypeSet kFloat10 = {{t::F32, V1_0}, {t::F16, V1_2}};
const TypeSet kFloat12 = {{t::F32, V1_2}, {t::F16, V1_2}};
const TypeSet kAll12 = {{t::F32, V1_2}, {t::F16, V1_2}, {t::I32, V1_2}, {t::Q8, V1_2}, {t::Q8S, V1_3}};
const TypeSet kNoInt12 = {{t::F32, V1_2}, {t::F16, V1_2}, {t::Q8, V1_2}, {t::Q8S, V1_3}};
const TypeSet kCompare12 = {{t::B8, V1_2}, {t::F32, V1_2}, {t::F16, V1_2},
                            {t::I32, V1_2}, {t::Q8, V1_2}, {t::Q8S, V1_3}};

// Input, filter and bias types of the convolutions, with the version each needs.
struct ConvTypes {
  OperandType input, filter, bias;
  HalVersion version;
};
const std::vector<ConvTypes> kConvTypes = {
    {t::F32, t::F32, t::F32, V1_0}, {t::Q8, t::Q8, t::I32, V1_0},  {t::F16, t::F16, t::F16, V1_2},
    {t::Q8, t::QPC, t::I32, V1_2},  {t::Q8S, t::Q8S, t::I32, V1_3}, {t::Q8S, t::QPC, t::I32, V1_3},
};

std::string typeName(OperandType type) {
  if (type == t::ANY) return "any type";
  if (isKnownOperandType(static_cast<int32_t>(type))) return std::string(toString(type));
  return fmt::format("unknown operand type code {}", static_cast<int32_t>(type));
}

// ---- Per-operation checks the type table cannot express ------------------------------------

// A per-channel filter must be quantized along its output-channel axis, and its bias carries
// scale 0: the bias scale of channel c is input scale * filter scale[c].
template <uint32_t kChannelDim>
Result<HalVersion> checkPerChannelFilter(const Subgraph& subgraph, const Operation& operation, HalVersion matched) {
  const Operand& filter = subgraph.operands[operation.inputs[1]];
  if (filter.type != t::QPC) return matched;
  const auto* params = filter.channelQuant();
  if (params == nullptr) {
    return invalidArgument("{} input 1: a TENSOR_QUANT8_SYMM_PER_CHANNEL filter needs per-channel quantization parameters",
                           toString(operation.type));
  }
  if (params->channelDim != kChannelDim) {
    return invalidArgument("{} input 1: per-channel filter must be quantized along dimension {}, got channelDim {}",
                           toString(operation.type), kChannelDim, params->channelDim);
  }
  const Operand& bias = subgraph.operands[operation.inputs[2]];
  if (bias.scale != 0.0f || bias.zeroPoint != 0) {
    return invalidArgument("{} input 2: the bias of a per-channel filter must have scale 0 and zeroPoint 0, got scale {} "
                           "zeroPoint {}", toString(operation.type), bias.scale, bias.zeroPoint);
  }
  return matched;
}

// HAL 1.1 PAD pads quant8 with 0; padding with a non-zero zero point (the real value 0) is 1.2.
Result<HalVersion> checkPad(const Subgraph& subgraph, const Operation& operation, HalVersion matched) {
  const Operand& input = subgraph.operands[operation.inputs[0]];
  if (input.type == t::Q8 && input.zeroPoint != 0) return later(matched, V1_2);
  return matched;
}

// The reference's validation (strided_slice::validate) refuses an input of known rank above 4,
// the rank its TFLite kernel walks; the signature's rank rules state exact ranks only.
Result<HalVersion> checkStridedSlice(const Subgraph& subgraph, const Operation& operation, HalVersion matched) {
  constexpr size_t kMaxStridedSliceRank = 4;
  const Operand& input = subgraph.operands[operation.inputs[0]];
  if (input.dimensions.size() > kMaxStridedSliceRank) {
    return invalidArgument("STRIDED_SLICE input 0: rank {} exceeds the maximum {}", input.dimensions.size(),
                           kMaxStridedSliceRank);
  }
  return matched;
}

// Before 1.2, quant8 concatenation required every input to share the output's scale and zero
// point; 1.2 requantizes.
Result<HalVersion> checkConcatenation(const Subgraph& subgraph, const Operation& operation, HalVersion matched) {
  const Operand& output = subgraph.operands[operation.outputs[0]];
  if (output.type != t::Q8) return matched;
  for (size_t i = 0; i + 1 < operation.inputs.size(); ++i) {
    const Operand& input = subgraph.operands[operation.inputs[i]];
    if (input.scale != output.scale || input.zeroPoint != output.zeroPoint) return later(matched, V1_2);
  }
  return matched;
}

// ---- The signature table -------------------------------------------------------------------

void addConvolutions(std::vector<OperationEntry>& table) {
  auto& conv = table[static_cast<size_t>(OperationType::CONV_2D)];
  auto& depthwise = table[static_cast<size_t>(OperationType::DEPTHWISE_CONV_2D)];
  auto& grouped = table[static_cast<size_t>(OperationType::GROUPED_CONV_2D)];
  auto& transposed = table[static_cast<size_t>(OperationType::TRANSPOSE_CONV_2D)];
  for (const ConvTypes& c : kConvTypes) {
    const Types head = {c.input, c.filter, c.bias};
    const std::vector<Tail> layoutAndDilation = {kLayoutTail, kDilationTail};
    // Explicit padding: 4 paddings, 2 strides, activation; implicit: scheme, 2 strides, activation.
    conv.add(c.version, cat({head, repeat(t::INT, 7)}), {c.input}, layoutAndDilation);
    conv.add(c.version, cat({head, repeat(t::INT, 4)}), {c.input}, layoutAndDilation);
    // Depthwise adds the depth multiplier before the activation.
    depthwise.add(c.version, cat({head, repeat(t::INT, 8)}), {c.input}, layoutAndDilation);
    depthwise.add(c.version, cat({head, repeat(t::INT, 5)}), {c.input}, layoutAndDilation);
    const HalVersion v12 = later(c.version, V1_2);
    // Grouped: paddings/scheme, 2 strides, groups, activation, then the (required) layout.
    grouped.add(v12, cat({head, repeat(t::INT, 8), {t::BOOL}}), {c.input});
    grouped.add(v12, cat({head, repeat(t::INT, 5), {t::BOOL}}), {c.input});
    // Transposed: 4 paddings or (output shape tensor, scheme), 2 strides, activation, layout.
    transposed.add(v12, cat({head, repeat(t::INT, 7), {t::BOOL}}), {c.input});
    transposed.add(v12, cat({head, {t::I32}, repeat(t::INT, 4), {t::BOOL}}), {c.input});
  }
  const std::vector<RankRule> convRanks = {{false, 0, 4}, {false, 1, 4}, {false, 2, 1}, {true, 0, 4}};
  for (auto* entry : {&conv, &depthwise, &grouped, &transposed}) entry->ranks = convRanks;
  conv.extra = checkPerChannelFilter<0>;
  depthwise.extra = checkPerChannelFilter<3>;
  grouped.extra = checkPerChannelFilter<0>;
  transposed.extra = checkPerChannelFilter<0>;
}

void addRecurrent(std::vector<OperationEntry>& table) {
  auto entry = [&](OperationType type) -> OperationEntry& { return table[static_cast<size_t>(type)]; };
  for (const TypeSince& ts : kFloat10) {
    const OperandType T = ts.type;
    const OperandType s = floatScalarFor(T);
    // LSTM: 20 tensors (input, weights, biases, states), activation, cell and projection clips;
    // 1.2 appends four layer-normalization weights.
    entry(OperationType::LSTM).add(ts.version, cat({repeat(T, 20), {t::INT, s, s}}), repeat(T, 4),
                                   {{repeat(T, 4), V1_2, {}}});
    entry(OperationType::RNN).add(ts.version, cat({repeat(T, 5), {t::INT}}), {T, T});
    entry(OperationType::SVDF).add(ts.version, cat({repeat(T, 5), {t::INT, t::INT}}), {T, T});
  }
  for (const TypeSince& ts : kFloat12) {
    const OperandType T = ts.type;
    const OperandType s = floatScalarFor(T);
    // Outputs: with merge_outputs one tensor instead of two; 1.3 can also return the states.
    const Types bilstmInputs = cat({repeat(T, 48), {t::INT, s, s, t::BOOL, t::BOOL}, repeat(T, 8)});
    auto& bilstm = entry(OperationType::BIDIRECTIONAL_SEQUENCE_LSTM);
    bilstm.add(V1_2, bilstmInputs, repeat(T, 2));
    bilstm.add(V1_2, bilstmInputs, repeat(T, 1));
    bilstm.add(V1_3, bilstmInputs, repeat(T, 6));
    bilstm.add(V1_3, bilstmInputs, repeat(T, 5));
    const Types birnnInputs = cat({repeat(T, 12), {t::INT, t::BOOL, t::BOOL}});
    auto& birnn = entry(OperationType::BIDIRECTIONAL_SEQUENCE_RNN);
    birnn.add(V1_2, birnnInputs, repeat(T, 2));
    birnn.add(V1_2, birnnInputs, repeat(T, 1));
    birnn.add(V1_3, birnnInputs, repeat(T, 4));
    birnn.add(V1_3, birnnInputs, repeat(T, 3));
    const Types unilstmInputs = cat({repeat(T, 20), {t::INT, s, s, t::BOOL}, repeat(T, 4)});
    entry(OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM).add(V1_2, unilstmInputs, {T});
    entry(OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM).add(V1_3, unilstmInputs, repeat(T, 3));
    const Types unirnnInputs = cat({repeat(T, 5), {t::INT, t::INT}});
    entry(OperationType::UNIDIRECTIONAL_SEQUENCE_RNN).add(V1_2, unirnnInputs, {T});
    entry(OperationType::UNIDIRECTIONAL_SEQUENCE_RNN).add(V1_3, unirnnInputs, {T, T});
  }
  // Input, 8 weights, 4 biases, previous cell state, previous output.
  entry(OperationType::QUANTIZED_16BIT_LSTM)
      .add(V1_2, cat({{t::Q8}, repeat(t::Q8, 8), repeat(t::I32, 4), {t::Q16S, t::Q8}}), {t::Q16S, t::Q8});
  // Input, 8 weights, 3 peepholes, 4 biases, projection weights and bias, output and cell
  // states, 4 layer norms, cell and projection clips, 4 intermediate scales, hidden state zero
  // point and scale.
  entry(OperationType::QUANTIZED_LSTM)
      .add(V1_3,
           cat({{t::Q8S}, repeat(t::Q8SYMM, 8), repeat(t::Q16S, 3), repeat(t::I32, 4), {t::Q8SYMM, t::I32},
                {t::Q8S, t::Q16S}, repeat(t::Q16S, 4), repeat(t::FLT, 6), {t::INT, t::FLT}}),
           {t::Q8S, t::Q16S, t::Q8S});
}

void addDetection(std::vector<OperationEntry>& table) {
  auto entry = [&](OperationType type) -> OperationEntry& { return table[static_cast<size_t>(type)]; };
  // Score/feature type, box type (quant8 boxes are quant16 asymm), scalar type.
  struct BoxTypes {
    OperandType data, box;
    HalVersion version;
  };
  const std::vector<BoxTypes> kBoxTypes = {
      {t::F32, t::F32, V1_2}, {t::F16, t::F16, V1_2}, {t::Q8, t::Q16A, V1_2}, {t::Q8S, t::Q16A, V1_3}};
  for (const BoxTypes& b : kBoxTypes) {
    const OperandType s = floatScalarFor(b.data);
    entry(OperationType::AXIS_ALIGNED_BBOX_TRANSFORM).add(b.version, {b.box, b.data, t::I32, b.box}, {b.box});
    entry(OperationType::BOX_WITH_NMS_LIMIT)
        .add(b.version, {b.data, b.box, t::I32, s, t::INT, t::INT, s, s, s}, {b.data, b.box, t::I32, t::I32});
    entry(OperationType::HEATMAP_MAX_KEYPOINT).add(b.version, {b.data, b.box, t::BOOL}, {b.data, b.box});
    entry(OperationType::ROI_ALIGN)
        .add(b.version, {b.data, b.box, t::I32, t::INT, t::INT, s, s, t::INT, t::INT, t::BOOL}, {b.data});
    entry(OperationType::ROI_POOLING).add(b.version, {b.data, b.box, t::I32, t::INT, t::INT, s, s, t::BOOL}, {b.data});
    // Quantized anchors are quant16 symm, image info quant16 asymm.
    const bool quantized = b.data == t::Q8 || b.data == t::Q8S;
    const OperandType anchors = quantized ? t::Q16S : b.data;
    entry(OperationType::GENERATE_PROPOSALS)
        .add(b.version, {b.data, b.data, anchors, b.box, s, s, t::INT, t::INT, s, s, t::BOOL}, {b.data, b.box, t::I32});
  }
  for (const TypeSince& ts : kFloat12) {
    const OperandType T = ts.type;
    const OperandType s = floatScalarFor(T);
    entry(OperationType::DETECTION_POSTPROCESSING)
        .add(V1_2, {T, T, T, s, s, s, s, t::BOOL, t::INT, t::INT, t::INT, s, s, t::BOOL}, {T, T, t::I32, t::I32});
  }
  entry(OperationType::BOX_WITH_NMS_LIMIT).ranks = {{false, 0, 2}, {false, 1, 2}, {false, 2, 1}};
  entry(OperationType::AXIS_ALIGNED_BBOX_TRANSFORM).ranks = {{false, 0, 2}, {false, 1, 2}, {false, 2, 1}, {false, 3, 2}};
  entry(OperationType::ROI_ALIGN).ranks = {{false, 0, 4}, {false, 1, 2}, {false, 2, 1}};
  entry(OperationType::ROI_POOLING).ranks = {{false, 0, 4}, {false, 1, 2}, {false, 2, 1}};
  entry(OperationType::GENERATE_PROPOSALS).ranks = {{false, 0, 4}, {false, 1, 4}, {false, 2, 2}, {false, 3, 2}};
  entry(OperationType::HEATMAP_MAX_KEYPOINT).ranks = {{false, 0, 4}, {false, 1, 2}};
  entry(OperationType::DETECTION_POSTPROCESSING).ranks = {{false, 0, 3}, {false, 1, 3}, {false, 2, 2}};
}

void addControlFlow(std::vector<OperationEntry>& table) {
  // IF: condition, then and else subgraphs, then the inputs of the branches.
  Signature ifSignature{V1_3, {t::B8, t::SUBGRAPH, t::SUBGRAPH, t::ANY}, {t::ANY}, 3, 0, 0, 1, {}, 0};
  table[static_cast<size_t>(OperationType::IF)].add(ifSignature);
  // WHILE: condition and body subgraphs, then at least one loop operand.
  Signature whileSignature{V1_3, {t::SUBGRAPH, t::SUBGRAPH, t::ANY}, {t::ANY}, 2, 1, 0, 1, {}, 0};
  table[static_cast<size_t>(OperationType::WHILE)].add(whileSignature);
}

std::vector<OperationEntry> buildTable() {
  std::vector<OperationEntry> table(static_cast<size_t>(OperationType::RANK) + 1);
  auto entry = [&](OperationType type) -> OperationEntry& { return table[static_cast<size_t>(type)]; };
  auto unary = [&](OperationType type, const TypeSet& types) {
    for (const TypeSince& ts : types) entry(type).add(ts.version, {ts.type}, {ts.type});
  };
  // Binary operation with a fused activation.
  auto arithmetic = [&](OperationType type, const TypeSet& types) {
    for (const TypeSince& ts : types) entry(type).add(ts.version, {ts.type, ts.type, t::INT}, {ts.type});
  };
  auto binary = [&](OperationType type, const TypeSet& types, std::optional<OperandType> output) {
    for (const TypeSince& ts : types) entry(type).add(ts.version, {ts.type, ts.type}, {output.value_or(ts.type)});
  };
  // Pooling: explicit (4 paddings, 2 strides, 2 filter sizes, activation) or implicit (scheme,
  // 2 strides, 2 filter sizes, activation), then the 1.2 data layout.
  auto pooling = [&](OperationType type, const TypeSet& types) {
    for (const TypeSince& ts : types) {
      entry(type).add(ts.version, cat({{ts.type}, repeat(t::INT, 9)}), {ts.type}, {kLayoutTail});
      entry(type).add(ts.version, cat({{ts.type}, repeat(t::INT, 6)}), {ts.type}, {kLayoutTail});
    }
    entry(type).ranks = {{false, 0, 4}, {true, 0, 4}};
  };
  using O = OperationType;

  arithmetic(O::ADD, cat2(kCore, {{t::I32, V1_3}}));
  arithmetic(O::MUL, cat2(kCore, {{t::I32, V1_3}}));
  arithmetic(O::SUB, {{t::F32, V1_1}, {t::F16, V1_2}, {t::Q8, V1_2}, {t::Q8S, V1_3}, {t::I32, V1_3}});
  arithmetic(O::DIV, {{t::F32, V1_1}, {t::F16, V1_2}, {t::I32, V1_3}});
  pooling(O::AVERAGE_POOL_2D, kCore);
  pooling(O::MAX_POOL_2D, kCore);
  pooling(O::L2_POOL_2D, kFloat10);
  for (const TypeSince& ts : kCore) {
    Signature concat{ts.version, {ts.type, t::INT}, {ts.type}, 0, 1, {}, 1, {}, 0};
    entry(O::CONCATENATION).add(concat);
  }
  entry(O::CONCATENATION).extra = checkConcatenation;
  addConvolutions(table);
  for (const TypeSince& ts : kCore) {
    for (O type : {O::DEPTH_TO_SPACE, O::SPACE_TO_DEPTH}) {
      entry(type).add(ts.version, {ts.type, t::INT}, {ts.type}, {kLayoutTail});
      entry(type).ranks = {{false, 0, 4}, {true, 0, 4}};
    }
  }
  for (OperandType out : {t::F32, t::F16}) {
    const HalVersion v = out == t::F32 ? V1_0 : V1_2;
    entry(O::DEQUANTIZE).add(v, {t::Q8}, {out});
    entry(O::DEQUANTIZE).add(V1_2, {t::Q8SYMM}, {out});
    entry(O::DEQUANTIZE).add(V1_2, {t::QPC}, {out});
    entry(O::DEQUANTIZE).add(V1_3, {t::Q8S}, {out});
  }
  for (const TypeSince& ts : TypeSet{{t::F32, V1_0}, {t::I32, V1_2}, {t::Q8, V1_2}, {t::F16, V1_3}, {t::Q8S, V1_3}}) {
    entry(O::EMBEDDING_LOOKUP).add(ts.version, {t::I32, ts.type}, {ts.type});
  }
  entry(O::EMBEDDING_LOOKUP).ranks = {{false, 0, 1}};
  unary(O::FLOOR, kFloat10);
  for (const TypeSince& ts : kCore) {
    const OperandType bias = ts.type == t::F32 || ts.type == t::F16 ? ts.type : t::I32;
    entry(O::FULLY_CONNECTED).add(ts.version, {ts.type, ts.type, bias, t::INT}, {ts.type});
  }
  entry(O::FULLY_CONNECTED).ranks = {{false, 1, 2}, {false, 2, 1}, {true, 0, 2}};
  for (OperandType values : {t::F32, t::I32, t::Q8}) {
    entry(O::HASHTABLE_LOOKUP).add(V1_0, {t::I32, t::I32, values}, {values, t::Q8});
  }
  entry(O::HASHTABLE_LOOKUP).ranks = {{false, 0, 1}, {false, 1, 1}};
  for (const TypeSince& ts : TypeSet{{t::F32, V1_0}, {t::F16, V1_2}, {t::Q8, V1_2}, {t::Q8S, V1_3}}) {
    entry(O::L2_NORMALIZATION).add(ts.version, {ts.type}, {ts.type}, {kAxisTail});
  }
  for (const TypeSince& ts : kFloat10) {
    const OperandType s = floatScalarFor(ts.type);
    entry(O::LOCAL_RESPONSE_NORMALIZATION).add(ts.version, {ts.type, t::INT, s, s, s}, {ts.type}, {kAxisTail});
  }
  unary(O::LOGISTIC, kCore);
  // The hash type fixes the version; the input to hash may be any of four types.
  for (const TypeSince& hash : kFloat10) {
    for (OperandType input : {t::F16, t::F32, t::I32, t::Q8}) {
      entry(O::LSH_PROJECTION).add(hash.version, {hash.type, input, hash.type, t::INT}, {t::I32});
    }
  }
  entry(O::LSH_PROJECTION).ranks = {{false, 0, 2}};
  addRecurrent(table);
  unary(O::RELU, kCore);
  unary(O::RELU1, kCore);
  unary(O::RELU6, kCore);
  for (const TypeSince& ts : kCore) entry(O::RESHAPE).add(ts.version, {ts.type, t::I32}, {ts.type});
  // Resize: output size as INT32 or (1.2) scale as float; 1.2 layout; 1.3 align_corners and
  // half_pixel_centers.
  for (const TypeSince& ts : TypeSet{{t::F32, V1_0}, {t::Q8, V1_2}, {t::F16, V1_2}, {t::Q8S, V1_3}}) {
    const OperandType s = floatScalarFor(ts.type);
    const std::vector<Tail> bilinearTails = {kLayoutTail, kResizeFlagsTail};
    entry(O::RESIZE_BILINEAR).add(ts.version, {ts.type, t::INT, t::INT}, {ts.type}, bilinearTails);
    entry(O::RESIZE_BILINEAR).add(later(ts.version, V1_2), {ts.type, s, s}, {ts.type}, bilinearTails);
  }
  for (const TypeSince& ts : kNoInt12) {
    const OperandType s = floatScalarFor(ts.type);
    const std::vector<Tail> nearestTails = {kResizeFlagsTail};
    entry(O::RESIZE_NEAREST_NEIGHBOR).add(ts.version, {ts.type, t::INT, t::INT, t::BOOL}, {ts.type}, nearestTails);
    entry(O::RESIZE_NEAREST_NEIGHBOR).add(ts.version, {ts.type, s, s, t::BOOL}, {ts.type}, nearestTails);
  }
  entry(O::RESIZE_BILINEAR).ranks = {{false, 0, 4}, {true, 0, 4}};
  entry(O::RESIZE_NEAREST_NEIGHBOR).ranks = {{false, 0, 4}, {true, 0, 4}};
  for (const TypeSince& ts : kCore) {
    entry(O::SOFTMAX).add(ts.version, {ts.type, floatScalarFor(ts.type)}, {ts.type}, {kAxisTail});
  }
  unary(O::TANH, {{t::F32, V1_0}, {t::F16, V1_2}, {t::Q8, V1_2}, {t::Q8S, V1_3}});

  // Added in 1.1.
  for (const TypeSince& ts : kCore11) {
    const OperandType T = ts.type;
    entry(O::BATCH_TO_SPACE_ND).add(ts.version, {T, t::I32}, {T}, {kLayoutTail});
    entry(O::SPACE_TO_BATCH_ND).add(ts.version, {T, t::I32, t::I32}, {T}, {kLayoutTail});
    entry(O::MEAN).add(ts.version, {T, t::I32, t::INT}, {T});
    entry(O::PAD).add(ts.version, {T, t::I32}, {T});
    entry(O::SQUEEZE).add(ts.version, {T, t::I32}, {T});
    entry(O::STRIDED_SLICE).add(ts.version, {T, t::I32, t::I32, t::I32, t::INT, t::INT, t::INT}, {T});
    entry(O::TRANSPOSE).add(ts.version, {T, t::I32}, {T});
  }
  entry(O::BATCH_TO_SPACE_ND).ranks = {{false, 0, 4}, {false, 1, 1}};
  entry(O::SPACE_TO_BATCH_ND).ranks = {{false, 0, 4}, {false, 1, 1}, {false, 2, 2}};
  entry(O::MEAN).ranks = {{false, 1, 1}};
  entry(O::PAD).ranks = {{false, 1, 2}};
  entry(O::PAD).extra = checkPad;
  entry(O::SQUEEZE).ranks = {{false, 1, 1}};
  entry(O::STRIDED_SLICE).ranks = {{false, 1, 1}, {false, 2, 1}, {false, 3, 1}};
  entry(O::STRIDED_SLICE).extra = checkStridedSlice;
  entry(O::TRANSPOSE).ranks = {{false, 1, 1}};

  // Added in 1.2 (and extended in 1.3).
  unary(O::ABS, {{t::F32, V1_2}, {t::F16, V1_2}, {t::I32, V1_3}});
  for (const TypeSince& ts : kAll12) {
    const OperandType T = ts.type;
    entry(O::ARGMAX).add(ts.version, {T, t::INT}, {t::I32});
    entry(O::ARGMIN).add(ts.version, {T, t::INT}, {t::I32});
    entry(O::EXPAND_DIMS).add(ts.version, {T, t::INT}, {T});
    entry(O::GATHER).add(ts.version, {T, t::INT, t::I32}, {T});
    entry(O::SELECT).add(ts.version, {t::B8, T, T}, {T});
    entry(O::SLICE).add(ts.version, {T, t::I32, t::I32}, {T});
    entry(O::TILE).add(ts.version, {T, t::I32}, {T});
    entry(O::TOPK_V2).add(ts.version, {T, t::INT}, {T, t::I32});
    entry(O::SPLIT).add(Signature{ts.version, {T, t::INT, t::INT}, {T}, {}, 1, 0, 1, {}, 0});
  }
  entry(O::SLICE).ranks = {{false, 1, 1}, {false, 2, 1}};
  entry(O::TILE).ranks = {{false, 1, 1}};
  addDetection(table);
  // CAST converts between the four 1.2 numeric types; 1.3 adds identity casts of the others.
  for (OperandType from : {t::F16, t::F32, t::I32, t::Q8}) {
    for (OperandType to : {t::F16, t::F32, t::I32, t::Q8}) entry(O::CAST).add(V1_2, {from}, {to});
  }
  for (OperandType same : {t::B8, t::Q8S, t::Q8SYMM, t::Q16A, t::Q16S}) entry(O::CAST).add(V1_3, {same}, {same});
  for (const TypeSince& ts : kNoInt12) entry(O::CHANNEL_SHUFFLE).add(ts.version, {ts.type, t::INT, t::INT}, {ts.type});
  for (O type : {O::EQUAL, O::GREATER, O::GREATER_EQUAL, O::LESS, O::LESS_EQUAL, O::NOT_EQUAL}) {
    binary(type, kCompare12, t::B8);
  }
  for (O type : {O::EXP, O::LOG, O::RSQRT, O::SIN, O::SQRT}) unary(type, kFloat12);
  for (const TypeSince& ts : kFloat12) {
    const OperandType s = floatScalarFor(ts.type);
    entry(O::INSTANCE_NORMALIZATION).add(V1_2, {ts.type, s, s, s, t::BOOL}, {ts.type});
    entry(O::LOG_SOFTMAX).add(V1_2, {ts.type, s, t::INT}, {ts.type});
    entry(O::RANDOM_MULTINOMIAL).add(V1_2, {ts.type, t::INT, t::I32}, {t::I32});
    entry(O::REDUCE_PROD).add(V1_2, {ts.type, t::I32, t::BOOL}, {ts.type});
    entry(O::REDUCE_SUM).add(V1_2, {ts.type, t::I32, t::BOOL}, {ts.type});
    entry(O::PAD_V2).add(V1_2, {ts.type, t::I32, s}, {ts.type});
    // 1.3 ELU: alpha scalar of the tensor's float type.
    entry(O::ELU).add(V1_3, {ts.type, s}, {ts.type});
    entry(O::FILL).add(V1_3, {t::I32, s}, {ts.type});
  }
  entry(O::FILL).add(V1_3, {t::I32, t::INT}, {t::I32});
  entry(O::FILL).ranks = {{false, 0, 1}};
  entry(O::INSTANCE_NORMALIZATION).ranks = {{false, 0, 4}, {true, 0, 4}};
  entry(O::RANDOM_MULTINOMIAL).ranks = {{false, 0, 2}};
  for (const TypeSince& ts : TypeSet{{t::Q8, V1_2}, {t::Q8S, V1_3}}) {
    entry(O::PAD_V2).add(ts.version, {ts.type, t::I32, t::INT}, {ts.type});
  }
  entry(O::PAD_V2).ranks = {{false, 1, 2}};
  for (O type : {O::LOGICAL_AND, O::LOGICAL_OR}) binary(type, {{t::B8, V1_2}}, std::nullopt);
  unary(O::LOGICAL_NOT, {{t::B8, V1_2}});
  binary(O::MAXIMUM, kAll12, std::nullopt);
  binary(O::MINIMUM, kAll12, std::nullopt);
  unary(O::NEG, {{t::F32, V1_2}, {t::F16, V1_2}, {t::I32, V1_2}});
  binary(O::POW, kFloat12, std::nullopt);
  binary(O::PRELU, kNoInt12, std::nullopt);
  for (OperandType from : {t::F32, t::F16}) {
    entry(O::QUANTIZE).add(V1_2, {from}, {t::Q8});
    entry(O::QUANTIZE).add(V1_3, {from}, {t::Q8S});
  }
  for (O type : {O::REDUCE_ALL, O::REDUCE_ANY}) entry(type).add(V1_2, {t::B8, t::I32, t::BOOL}, {t::B8});
  for (const TypeSince& ts : kNoInt12) {
    entry(O::REDUCE_MAX).add(ts.version, {ts.type, t::I32, t::BOOL}, {ts.type});
    entry(O::REDUCE_MIN).add(ts.version, {ts.type, t::I32, t::BOOL}, {ts.type});
  }
  for (O type : {O::REDUCE_ALL, O::REDUCE_ANY, O::REDUCE_MAX, O::REDUCE_MIN, O::REDUCE_PROD, O::REDUCE_SUM}) {
    entry(type).ranks = {{false, 1, 1}};
  }

  // Added in 1.3.
  addControlFlow(table);
  unary(O::HARD_SWISH, {{t::F32, V1_3}, {t::F16, V1_3}, {t::Q8, V1_3}, {t::Q8S, V1_3}});
  for (OperandType T : {t::B8, t::F16, t::F32, t::I32, t::Q8, t::Q8S, t::Q8SYMM, t::QPC, t::Q16A, t::Q16S}) {
    entry(O::RANK).add(V1_3, {T}, {t::INT});
  }
  return table;
}

// com.sable.tflite (extensions.h), indexed by the type within the extension. Extensions exist
// from HAL 1.2; quant8 signed raises the version to 1.3 as for NNAPI's operations. Shapes,
// axes and indices are the kernel's to check (runtime/src/cpu/ops_extension.cc), as for NNAPI's.
std::vector<OperationEntry> buildExtensionTable() {
  std::vector<OperationEntry> table(allSableOperations().size());
  auto entry = [&](SableOperation operation) -> OperationEntry& { return table[static_cast<size_t>(operation)]; };
  using S = SableOperation;
  const TypeSet kData = {{t::F32, V1_2}, {t::I32, V1_2}, {t::Q8, V1_2}, {t::Q8S, V1_3}};
  for (const TypeSince& ts : kData) {
    const OperandType T = ts.type;
    entry(S::GATHER_ND).add(ts.version, {T, t::I32}, {T});
    // PACK(values..., axis): one or more values; UNPACK(input, axis): one or more outputs.
    entry(S::PACK).add(Signature{ts.version, {T, t::INT}, {T}, 0, 1, {}, 1, {}, 0});
    entry(S::UNPACK).add(Signature{ts.version, {T, t::INT}, {T}, {}, 1, 0, 1, {}, 0});
  }
  for (OperandType T : {t::F32, t::I32}) {
    entry(S::FLOOR_DIV).add(V1_2, {T, T}, {T});
    entry(S::FLOOR_MOD).add(V1_2, {T, T}, {T});
  }
  return table;
}

// ---- Matching ------------------------------------------------------------------------------

const std::vector<OperationEntry>& table() {
  static const std::vector<OperationEntry> kTable = buildTable();
  return kTable;
}

const std::vector<OperationEntry>& extensionTable() {
  static const std::vector<OperationEntry> kTable = buildExtensionTable();
  return kTable;
}

// The type a signature expects at `position` of a list of `count` operands, or nullopt when the
// signature cannot have `count` operands.
std::optional<OperandType> expectedAt(const Types& types, std::optional<size_t> variadic, size_t minRepeats,
                                      size_t count, size_t position) {
  if (!variadic) {
    if (count != types.size()) return std::nullopt;
    return types[position];
  }
  const size_t fixed = types.size() - 1;
  if (count < fixed + minRepeats) return std::nullopt;
  const size_t repeats = count - fixed;
  if (position < *variadic) return types[position];
  if (position < *variadic + repeats) return types[*variadic];
  return types[position - repeats + 1];
}

bool countsMatch(const Signature& s, size_t inputs, size_t outputs) {
  auto fits = [](const Types& types, std::optional<size_t> variadic, size_t minRepeats, size_t count) {
    return variadic ? count + 1 >= types.size() + minRepeats : count == types.size();
  };
  return fits(s.inputs, s.variadicInput, s.minInputRepeats, inputs) &&
         fits(s.outputs, s.variadicOutput, s.minOutputRepeats, outputs);
}

std::string describeCounts(const std::vector<Signature>& signatures, bool outputs) {
  std::vector<std::string> counts;
  for (const Signature& s : signatures) {
    const Types& types = outputs ? s.outputs : s.inputs;
    const auto variadic = outputs ? s.variadicOutput : s.variadicInput;
    const size_t minRepeats = outputs ? s.minOutputRepeats : s.minInputRepeats;
    std::string text = variadic ? fmt::format("at least {}", types.size() - 1 + minRepeats)
                                : std::to_string(types.size());
    if (std::find(counts.begin(), counts.end(), text) == counts.end()) counts.push_back(std::move(text));
  }
  return fmt::format("{}", fmt::join(counts, ", "));
}

bool holdsDefaults(const Model& model, const Subgraph& subgraph, const Operation& operation, const Tail& tail,
                   size_t begin) {
  if (tail.defaults.empty()) return false;
  for (size_t i = 0; i < tail.defaults.size(); ++i) {
    const auto value = constantScalar(model, subgraph.operands[operation.inputs[begin + i]]);
    if (!value) return false;
    if (tail.defaults[i] == kLastAxis) {
      const size_t rank = subgraph.operands[operation.inputs[0]].dimensions.size();
      if (*value != -1 && (rank == 0 || *value != static_cast<int32_t>(rank) - 1)) return false;
    } else if (*value != tail.defaults[i]) {
      return false;
    }
  }
  return true;
}

// The version a matched signature needs: its own, raised by every tail up to the last one that
// does not hold its defaults.
HalVersion versionNeeded(const Signature& s, const Model& model, const Subgraph& subgraph, const Operation& operation) {
  HalVersion withTails = s.version;
  HalVersion needed = s.version;
  size_t begin = s.tailsBegin;
  for (const Tail& tail : s.tails) {
    withTails = later(withTails, tail.version);
    if (!holdsDefaults(model, subgraph, operation, tail, begin)) needed = withTails;
    begin += tail.inputs.size();
  }
  return needed;
}

Result<void> checkRanks(const Subgraph& subgraph, const Operation& operation, const OperationEntry& entry,
                        std::string_view name) {
  for (const RankRule& rule : entry.ranks) {
    const auto& indexes = rule.isOutput ? operation.outputs : operation.inputs;
    if (rule.position >= indexes.size()) continue;
    const Operand& operand = subgraph.operands[indexes[rule.position]];
    if (operand.lifetime == OperandLifeTime::NO_VALUE || operand.dimensions.empty()) continue;
    if (operand.dimensions.size() != rule.rank) {
      return invalidArgument("{} {} {}: expected rank {}, got rank {}", name,
                             rule.isOutput ? "output" : "input", rule.position, rule.rank, operand.dimensions.size());
    }
  }
  return {};
}

// The entry an extension operation resolves to through the model's extensionNameToPrefix.
Result<const OperationEntry*> extensionEntry(const Model& model, const Operation& operation) {
  const int32_t code = static_cast<int32_t>(operation.type);
  const uint16_t prefix = extensionPrefixOf(code);
  const auto mapping = std::find_if(model.extensionNameToPrefix.begin(), model.extensionNameToPrefix.end(),
                                    [&](const auto& entry) { return entry.prefix == prefix; });
  if (mapping == model.extensionNameToPrefix.end()) {
    return invalidArgument("operation type code {:#x} has extension prefix {}, which extensionNameToPrefix does not map",
                           code, prefix);
  }
  if (mapping->name != kSableExtensionName) {
    return invalidArgument("operation type code {:#x}: extension '{}' (prefix {}) is not supported; the supported "
                           "extension is '{}'",
                           code, mapping->name, prefix, kSableExtensionName);
  }
  const auto operationWithin = sableOperationFromCode(typeWithinExtension(code));
  if (!operationWithin) {
    return invalidArgument("operation type code {:#x}: '{}' has no operation {} (it defines 0..{})", code,
                           kSableExtensionName, typeWithinExtension(code), allSableOperations().size() - 1);
  }
  return &extensionTable()[static_cast<size_t>(*operationWithin)];
}

}  // namespace

Result<HalVersion> validateOperation(const Model& model, const Subgraph& subgraph, const Operation& operation) {
  const int32_t code = static_cast<int32_t>(operation.type);
  const bool isExtension = isExtensionCode(code);
  if (!isExtension && !isKnownOperationType(code)) return invalidArgument("unknown operation type code {}", code);
  if (operation.type == OperationType::OEM_OPERATION) {
    return invalidArgument("OEM_OPERATION is not supported: its semantics are vendor-defined");
  }
  const std::string nameText = operationName(model, operation.type);
  const std::string_view name = nameText;
  for (size_t i = 0; i < operation.inputs.size(); ++i) {
    if (operation.inputs[i] >= subgraph.operands.size()) {
      return invalidArgument("{} input {}: operand index {} out of range ({} operands)", name, i, operation.inputs[i],
                             subgraph.operands.size());
    }
  }
  for (size_t i = 0; i < operation.outputs.size(); ++i) {
    if (operation.outputs[i] >= subgraph.operands.size()) {
      return invalidArgument("{} output {}: operand index {} out of range ({} operands)", name, i,
                             operation.outputs[i], subgraph.operands.size());
    }
  }
  const OperationEntry* found = nullptr;
  if (isExtension) {
    SABLE_ASSIGN_OR_RETURN(found, extensionEntry(model, operation));
  } else {
    const auto& all = table();
    if (static_cast<size_t>(code) >= all.size() || !all[static_cast<size_t>(code)].known) {
      return invalidArgument("{}: no signature table for this operation type", name);
    }
    found = &all[static_cast<size_t>(code)];
  }
  const OperationEntry& entry = *found;
  const size_t inputCount = operation.inputs.size();
  const size_t outputCount = operation.outputs.size();

  std::vector<const Signature*> candidates;
  for (const Signature& s : entry.signatures) {
    if (countsMatch(s, inputCount, outputCount)) candidates.push_back(&s);
  }
  if (candidates.empty()) {
    return invalidArgument("{}: {} inputs and {} outputs match no signature; expected {} inputs and {} outputs", name,
                           inputCount, outputCount, describeCounts(entry.signatures, false),
                           describeCounts(entry.signatures, true));
  }

  const std::string firstInput =
      inputCount > 0 ? typeName(subgraph.operands[operation.inputs[0]].type) : std::string("no");
  for (size_t position = 0; position < inputCount + outputCount; ++position) {
    const bool isOutput = position >= inputCount;
    const size_t index = isOutput ? position - inputCount : position;
    const OperandType actual = subgraph.operands[isOutput ? operation.outputs[index] : operation.inputs[index]].type;
    std::vector<const Signature*> agreeing;
    std::vector<std::string> expected;
    for (const Signature* s : candidates) {
      const auto type = isOutput ? expectedAt(s->outputs, s->variadicOutput, s->minOutputRepeats, outputCount, index)
                                 : expectedAt(s->inputs, s->variadicInput, s->minInputRepeats, inputCount, index);
      if (!type) continue;
      if (*type == actual || *type == t::ANY) agreeing.push_back(s);
      std::string text = typeName(*type);
      if (std::find(expected.begin(), expected.end(), text) == expected.end()) expected.push_back(std::move(text));
    }
    if (agreeing.empty()) {
      const std::string context = position == 0 ? std::string() : fmt::format(" for a {} input", firstInput);
      return invalidArgument("{} {} {}: expected {}{}, got {}", name, isOutput ? "output" : "input", index,
                             fmt::join(expected, " or "), context, typeName(actual));
    }
    candidates = std::move(agreeing);
  }

  HalVersion version = V1_3;
  for (const Signature* s : candidates) version = std::min(version, versionNeeded(*s, model, subgraph, operation));
  SABLE_TRY(checkRanks(subgraph, operation, entry, name));
  if (isExtension) version = later(version, V1_2);
  if (entry.extra != nullptr) return entry.extra(subgraph, operation, version);
  return version;
}

}  // namespace sable::hal
