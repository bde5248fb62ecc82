// The TFLite importer (docs/tflite.md). Order of work, as for every blob Sable reads: check the
// size and file identifier, run flatbuffers::Verifier over the whole buffer, then walk the model
// checking each index and size before it is used, building the NN HAL model with ModelBuilder.
// The result goes through hal::validateModel, so an operation the mapping got wrong is reported
// here rather than at preparation.
#include "sable/runtime/tflite_import.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>

#include <flatbuffers/flexbuffers.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sable/hal/extensions.h"
#include "sable/hal/validation.h"
#include "sable/runtime/model_builder.h"
#include "tflite_schema_generated.h"

namespace sable::runtime {
namespace {

namespace fb = sable::tflite_fb;
using hal::OperandType;
using hal::OperationType;

// NNAPI's codes (NeuralNetworks.h) for the scalar operands the mapped operations take.
constexpr int32_t kPaddingSame = 1;
constexpr int32_t kPaddingValid = 2;
constexpr int32_t kFuseNone = 0, kFuseRelu = 1, kFuseRelu1 = 2, kFuseRelu6 = 3;

// Bounds on shapes: NNAPI operations take at most rank 6 here, and no CNN tensor is near these
// sizes; anything above is a corrupt or hostile file, refused before arithmetic can overflow.
constexpr size_t kMaxRank = 6;
constexpr int64_t kMaxDimension = int64_t{1} << 24;
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 30;
// A recurrent state (a variable tensor) has no bytes in the file but becomes a zero constant:
// bounded far lower, so that a small file cannot make the importer allocate gigabytes. 16 MiB is
// [64 batches, 65536 units] in float32.
constexpr uint64_t kMaxStateBytes = uint64_t{1} << 24;

// The one custom operator the importer maps (to DETECTION_POSTPROCESSING).
constexpr std::string_view kDetectionPostProcess = "TFLite_Detection_PostProcess";

template <typename... Args>
hal::Error importError(fmt::format_string<Args...> format, Args&&... args) {
  return hal::makeError(hal::ErrorStatus::INVALID_ARGUMENT, "TFLite import: {}",
                        fmt::format(format, std::forward<Args>(args)...));
}

std::string_view operatorName(int32_t code) {
  const char* name = fb::EnumNameBuiltinOperator(static_cast<fb::BuiltinOperator>(code));
  return name != nullptr && *name != '\0' ? name : "";
}

// The highest version of each operator whose semantics the mapping below reproduces. Later
// versions add input types or options (int16 activations, hybrid weights...) that this importer
// does not look at, so they are refused rather than silently mistranslated.
std::optional<int32_t> maxSupportedVersion(fb::BuiltinOperator op) {
  switch (op) {
    case fb::BuiltinOperator::CONV_2D: return 3;           // 2: uint8/int8, 3: per-channel int8
    case fb::BuiltinOperator::DEPTHWISE_CONV_2D: return 3;
    case fb::BuiltinOperator::FULLY_CONNECTED: return 4;
    case fb::BuiltinOperator::AVERAGE_POOL_2D:
    case fb::BuiltinOperator::MAX_POOL_2D: return 2;
    case fb::BuiltinOperator::ADD: return 2;
    case fb::BuiltinOperator::SUB: return 2;
    case fb::BuiltinOperator::MUL: return 3;
    case fb::BuiltinOperator::RELU: return 2;
    case fb::BuiltinOperator::RELU6: return 2;
    case fb::BuiltinOperator::RELU_N1_TO_1: return 1;
    case fb::BuiltinOperator::LOGISTIC: return 2;
    case fb::BuiltinOperator::TANH: return 2;
    case fb::BuiltinOperator::HARD_SWISH: return 1;
    case fb::BuiltinOperator::SOFTMAX: return 2;
    case fb::BuiltinOperator::RESHAPE: return 1;
    case fb::BuiltinOperator::SQUEEZE: return 1;
    case fb::BuiltinOperator::CONCATENATION: return 2;
    case fb::BuiltinOperator::PAD: return 2;
    case fb::BuiltinOperator::PADV2: return 2;
    case fb::BuiltinOperator::MEAN: return 2;
    case fb::BuiltinOperator::QUANTIZE: return 2;
    case fb::BuiltinOperator::DEQUANTIZE: return 2;
    case fb::BuiltinOperator::RESIZE_BILINEAR: return 3;
    case fb::BuiltinOperator::RESIZE_NEAREST_NEIGHBOR: return 3;
    case fb::BuiltinOperator::TRANSPOSE: return 2;
    case fb::BuiltinOperator::ARG_MAX:
    case fb::BuiltinOperator::ARG_MIN: return 2;  // 2: int8 input
    // Element-wise operators (later versions add int16 or other input types).
    case fb::BuiltinOperator::ABS:
    case fb::BuiltinOperator::NEG:
    case fb::BuiltinOperator::SQRT:
    case fb::BuiltinOperator::RSQRT:
    case fb::BuiltinOperator::EXP:
    case fb::BuiltinOperator::LOG:
    case fb::BuiltinOperator::LOGICAL_NOT:
    case fb::BuiltinOperator::LOGICAL_AND:
    case fb::BuiltinOperator::LOGICAL_OR:
    case fb::BuiltinOperator::CAST: return 1;
    case fb::BuiltinOperator::MAXIMUM:
    case fb::BuiltinOperator::MINIMUM:
    case fb::BuiltinOperator::LESS:
    case fb::BuiltinOperator::LESS_EQUAL:
    case fb::BuiltinOperator::GREATER:
    case fb::BuiltinOperator::GREATER_EQUAL:
    case fb::BuiltinOperator::EQUAL:
    case fb::BuiltinOperator::NOT_EQUAL:
    case fb::BuiltinOperator::PRELU:
    case fb::BuiltinOperator::SELECT:
    case fb::BuiltinOperator::SELECT_V2: return 2;
    case fb::BuiltinOperator::DIV: return 1;
    case fb::BuiltinOperator::SUM:
    case fb::BuiltinOperator::REDUCE_PROD:
    case fb::BuiltinOperator::REDUCE_MAX:
    case fb::BuiltinOperator::REDUCE_MIN:
    case fb::BuiltinOperator::REDUCE_ANY:
    case fb::BuiltinOperator::LOG_SOFTMAX:
    case fb::BuiltinOperator::LEAKY_RELU:
    case fb::BuiltinOperator::L2_NORMALIZATION: return 2;
    case fb::BuiltinOperator::SPACE_TO_DEPTH:
    case fb::BuiltinOperator::DEPTH_TO_SPACE:
    case fb::BuiltinOperator::GATHER:
    case fb::BuiltinOperator::SLICE:
    case fb::BuiltinOperator::SPLIT: return 2;
    case fb::BuiltinOperator::TILE: return 1;
    case fb::BuiltinOperator::SPACE_TO_BATCH_ND:
    case fb::BuiltinOperator::BATCH_TO_SPACE_ND: return 2;
    case fb::BuiltinOperator::LOCAL_RESPONSE_NORMALIZATION: return 1;
    case fb::BuiltinOperator::STRIDED_SLICE: return 2;
    case fb::BuiltinOperator::SPLIT_V: return 2;
    // 1: float, 2: int8 weights, 3: a bias input, 4: a fused activation.
    case fb::BuiltinOperator::TRANSPOSE_CONV: return 4;
    // 1: float or fully integer, 2-3: hybrid (int8 weights, float activations); all dequantized.
    case fb::BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM: return 3;
    // 1: float, 2: hybrid, 3: asymmetric input quantization of the hybrid kernel; all in float here.
    case fb::BuiltinOperator::BIDIRECTIONAL_SEQUENCE_LSTM:
    case fb::BuiltinOperator::RNN:
    case fb::BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_RNN:
    case fb::BuiltinOperator::BIDIRECTIONAL_SEQUENCE_RNN: return 3;
    // No NNAPI operation: com.sable.tflite's (hal/extensions.h). Later versions add int8/int16
    // integer arithmetic (FLOOR_DIV 3, FLOOR_MOD 2), int16, bool or string tensors.
    case fb::BuiltinOperator::GATHER_ND: return 1;
    case fb::BuiltinOperator::FLOOR_DIV: return 2;   // 2: float32
    case fb::BuiltinOperator::FLOOR_MOD: return 1;
    case fb::BuiltinOperator::PACK:
    case fb::BuiltinOperator::UNPACK: return 2;      // 2: int8
    default: return std::nullopt;
  }
}

// Zero point i of a quantization (i < its count). Copied out byte-wise: the verifier checks a
// vector's 4-byte length prefix for alignment but not its 8-byte elements, so a corrupt file can
// place them misaligned (found by the fuzz target; a direct load would be undefined behaviour).
int64_t zeroPointAt(const fb::QuantizationParameters& q, size_t i) {
  int64_t value = 0;
  std::memcpy(&value, reinterpret_cast<const uint8_t*>(q.zero_point()->data()) + i * sizeof(int64_t), sizeof value);
  return flatbuffers::EndianScalar(value);
}

class Importer {
 public:
  explicit Importer(const fb::Model& model) : model_(model) {}

  hal::Result<hal::Model> run() {
    if (model_.version() != 3) return importError("schema version {} (only version 3 is read)", model_.version());
    const auto* subgraphs = model_.subgraphs();
    if (subgraphs == nullptr || subgraphs->size() == 0) return importError("the model has no subgraph");
    // Subgraph 0 is the model; others are bodies of control-flow operators, which are refused below.
    graph_ = subgraphs->Get(0);
    if (graph_ == nullptr || graph_->tensors() == nullptr) return importError("subgraph 0 has no tensors");
    tensors_ = graph_->tensors();
    operands_.assign(tensors_->size(), std::nullopt);

    if (graph_->inputs() == nullptr || graph_->inputs()->size() == 0) return importError("subgraph 0 has no inputs");
    if (graph_->outputs() == nullptr || graph_->outputs()->size() == 0) return importError("subgraph 0 has no outputs");
    for (int32_t t : *graph_->inputs()) {
      SABLE_ASSIGN_OR_RETURN(const fb::Tensor* tensor, tensorAt(t, "subgraph input"));
      SABLE_ASSIGN_OR_RETURN(const auto* data, constantData(t));
      if (data != nullptr) return importError("subgraph input tensor {} has constant data", t);
      if (operands_[t]) return importError("tensor {} is listed twice as a subgraph input", t);
      SABLE_ASSIGN_OR_RETURN(Shape shape, operandShape(t, *tensor));
      operands_[t] = builder_.addInput(shape.type, shape.dims, shape.scale, shape.zeroPoint);
    }
    if (graph_->operators() != nullptr) {
      for (uint32_t i = 0; i < graph_->operators()->size(); ++i) {
        const fb::Operator* op = graph_->operators()->Get(i);
        auto mapped = mapOperator(i, *op);
        if (!mapped.ok()) return std::move(mapped).error();
      }
    }
    for (int32_t t : *graph_->outputs()) {
      SABLE_ASSIGN_OR_RETURN(const fb::Tensor* tensor, tensorAt(t, "subgraph output"));
      (void)tensor;
      if (!operands_[t]) return importError("subgraph output tensor {} is written by no operator", t);
      const hal::Operand& operand = builder_.model().main.operands[*operands_[t]];
      if (operand.lifetime != hal::OperandLifeTime::TEMPORARY_VARIABLE)
        return importError("subgraph output tensor {} is a subgraph input, a constant or listed twice", t);
      builder_.makeOutput(*operands_[t]);
    }
    SABLE_ASSIGN_OR_RETURN(hal::Model model, builder_.finish());
    auto valid = hal::validateModel(model);
    if (!valid.ok()) return importError("the mapped model is not a valid NNAPI model: {}", valid.error().message);
    return model;
  }

 private:
  struct Shape {
    OperandType type = OperandType::TENSOR_FLOAT32;
    std::vector<uint32_t> dims;
    float scale = 0.0f;
    int32_t zeroPoint = 0;
    std::vector<float> channelScales;  // per-channel quantization (TENSOR_QUANT8_SYMM_PER_CHANNEL)
    uint32_t channelDim = 0;
  };

  hal::Result<const fb::Tensor*> tensorAt(int32_t index, std::string_view what) const {
    if (index < 0 || static_cast<uint32_t>(index) >= tensors_->size())
      return importError("{}: tensor index {} out of range (the subgraph has {} tensors)", what, index,
                         tensors_->size());
    const fb::Tensor* tensor = tensors_->Get(static_cast<uint32_t>(index));
    if (tensor == nullptr) return importError("{}: tensor {} is null", what, index);
    return tensor;
  }

  // The bytes of a tensor's buffer, or nullptr when it has none (an activation). Checks the buffer
  // index and that the bytes fill the tensor exactly.
  hal::Result<const flatbuffers::Vector<uint8_t>*> constantData(int32_t index) const {
    const fb::Tensor* tensor = tensors_->Get(static_cast<uint32_t>(index));
    const uint32_t b = tensor->buffer();
    const auto* buffers = model_.buffers();
    if (b == 0) return static_cast<const flatbuffers::Vector<uint8_t>*>(nullptr);  // buffer 0: the empty sentinel
    if (buffers == nullptr || b >= buffers->size())
      return importError("tensor {}: buffer index {} out of range (the model has {} buffers)", index, b,
                         buffers == nullptr ? 0 : buffers->size());
    const fb::Buffer* buffer = buffers->Get(b);
    if (buffer == nullptr) return importError("tensor {}: buffer {} is null", index, b);
    if (buffer->offset() > 1 || buffer->size() > 0)
      return importError("tensor {}: buffer {} keeps its data outside the flatbuffer (not supported)", index, b);
    if (buffer->data() == nullptr || buffer->data()->size() == 0) return static_cast<const flatbuffers::Vector<uint8_t>*>(nullptr);
    return buffer->data();
  }

  // The operand type, dimensions and quantization of a tensor, with every field checked.
  hal::Result<Shape> operandShape(int32_t index, const fb::Tensor& tensor) const {
    Shape shape;
    if (tensor.is_variable()) return importError("tensor {} is a variable tensor (not supported)", index);
    if (tensor.sparsity() != nullptr) return importError("tensor {} is sparse (not supported)", index);
    if (tensor.shape() == nullptr) return importError("tensor {} has no shape", index);
    if (tensor.shape()->size() > kMaxRank)
      return importError("tensor {} has rank {} (at most {})", index, tensor.shape()->size(), kMaxRank);
    for (int32_t d : *tensor.shape()) {
      if (d <= 0 || d > kMaxDimension)
        return importError("tensor {} has dimension {} (each must be in 1..{})", index, d, kMaxDimension);
      shape.dims.push_back(static_cast<uint32_t>(d));
    }
    // A scalar becomes a one-element tensor: NNAPI reads rank 0 as "unknown rank".
    if (shape.dims.empty()) shape.dims.push_back(1);

    const fb::QuantizationParameters* q = tensor.quantization();
    const size_t scales = q != nullptr && q->scale() != nullptr ? q->scale()->size() : 0;
    const size_t zeroPoints = q != nullptr && q->zero_point() != nullptr ? q->zero_point()->size() : 0;
    if (q != nullptr && q->details_type() != fb::QuantizationDetails::NONE)
      return importError("tensor {} has a custom quantization (not supported)", index);
    if (zeroPoints != 0 && zeroPoints != scales)
      return importError("tensor {}: {} zero points for {} scales", index, zeroPoints, scales);
    for (size_t i = 0; i < scales; ++i) {
      const float s = q->scale()->Get(static_cast<uint32_t>(i));
      if (!std::isfinite(s) || s < 0.0f) return importError("tensor {}: scale {} is not a finite value >= 0", index, s);
    }
    const float scale = scales > 0 ? q->scale()->Get(0) : 0.0f;
    const int64_t zeroPoint = zeroPoints > 0 ? zeroPointAt(*q, 0) : 0;
    const bool quantized = scales > 0 && scale > 0.0f;

    auto needQuantization = [&](std::string_view type) -> hal::Result<void> {
      if (!quantized) return importError("tensor {} of type {} has no quantization scale", index, type);
      return {};
    };
    switch (tensor.type()) {
      case fb::TensorType::FLOAT32: shape.type = OperandType::TENSOR_FLOAT32; break;
      case fb::TensorType::FLOAT16: shape.type = OperandType::TENSOR_FLOAT16; break;
      case fb::TensorType::BOOL: shape.type = OperandType::TENSOR_BOOL8; break;
      case fb::TensorType::INT32:
        shape.type = OperandType::TENSOR_INT32;
        // A bias: its scale is set by the operation that reads it (input scale × filter scale).
        shape.scale = scales == 1 ? scale : 0.0f;
        break;
      case fb::TensorType::UINT8:
        if (!quantized && zeroPoint == 0) {
          // A raw uint8 tensor (e.g. an image input): NNAPI's 8-bit types need a scale, so the
          // delegate gives it scale 1, zero point 0 — the stored value is the real value.
          shape.type = OperandType::TENSOR_QUANT8_ASYMM;
          shape.scale = 1.0f;
          break;
        }
        SABLE_TRY(needQuantization("UINT8"));
        if (scales != 1) return importError("tensor {}: uint8 with {} scales (only per-tensor)", index, scales);
        if (zeroPoint < 0 || zeroPoint > 255) return importError("tensor {}: uint8 zero point {}", index, zeroPoint);
        shape.type = OperandType::TENSOR_QUANT8_ASYMM;
        shape.scale = scale;
        shape.zeroPoint = static_cast<int32_t>(zeroPoint);
        break;
      case fb::TensorType::INT8:
        if (!quantized && zeroPoint == 0) {  // as UINT8 above
          shape.type = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
          shape.scale = 1.0f;
          break;
        }
        SABLE_TRY(needQuantization("INT8"));
        if (scales > 1) {
          // Per-channel: only symmetric, one scale per slice of the quantized dimension.
          const int32_t dim = q->quantized_dimension();
          if (dim < 0 || static_cast<size_t>(dim) >= shape.dims.size())
            return importError("tensor {}: quantized dimension {} outside rank {}", index, dim, shape.dims.size());
          if (scales != shape.dims[dim])
            return importError("tensor {}: {} scales for {} channels along dimension {}", index, scales,
                               shape.dims[dim], dim);
          for (size_t i = 0; i < zeroPoints; ++i)
            if (zeroPointAt(*q, i) != 0)
              return importError("tensor {}: per-channel quantization with a non-zero zero point", index);
          for (size_t i = 0; i < scales; ++i) {
            if (q->scale()->Get(static_cast<uint32_t>(i)) <= 0.0f)
              return importError("tensor {}: per-channel scale {} is not positive", index, i);
            shape.channelScales.push_back(q->scale()->Get(static_cast<uint32_t>(i)));
          }
          shape.type = OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
          shape.channelDim = static_cast<uint32_t>(dim);
          break;
        }
        if (zeroPoint < -128 || zeroPoint > 127) return importError("tensor {}: int8 zero point {}", index, zeroPoint);
        shape.type = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
        shape.scale = scale;
        shape.zeroPoint = static_cast<int32_t>(zeroPoint);
        break;
      case fb::TensorType::INT16:
        SABLE_TRY(needQuantization("INT16"));
        if (scales != 1 || zeroPoint != 0)
          return importError("tensor {}: int16 must be quantized per tensor with zero point 0", index);
        shape.type = OperandType::TENSOR_QUANT16_SYMM;
        shape.scale = scale;
        break;
      default:
        return importError("tensor {} has type {} (not supported)", index,
                           static_cast<int>(tensor.type()));
    }
    const auto bytes = hal::sizeOfData(shape.type, shape.dims);
    if (!bytes || *bytes > kMaxTensorBytes) return importError("tensor {} is too large", index);
    return shape;
  }

  // The operand of tensor `index` read by an operation: its activation operand, or a constant
  // operand made from its buffer the first time it is read.
  hal::Result<uint32_t> input(int32_t index, std::string_view what) {
    SABLE_ASSIGN_OR_RETURN(const fb::Tensor* tensor, tensorAt(index, what));
    if (operands_[index]) return *operands_[index];
    SABLE_ASSIGN_OR_RETURN(const auto* data, constantData(index));
    if (data == nullptr) return importError("{}: tensor {} is read before any operator writes it", what, index);
    SABLE_ASSIGN_OR_RETURN(Shape shape, operandShape(index, *tensor));
    SABLE_ASSIGN_OR_RETURN(uint32_t operand, addConstant(index, shape, *data));
    operands_[index] = operand;
    return operand;
  }

  hal::Result<uint32_t> addConstant(int32_t index, const Shape& shape, const flatbuffers::Vector<uint8_t>& data) {
    const size_t expected = *hal::sizeOfData(shape.type, shape.dims);
    if (data.size() != expected)
      return importError("tensor {}: buffer holds {} bytes, the tensor needs {}", index, data.size(), expected);
    uint32_t operand = builder_.addConstant<uint8_t>(shape.type, shape.dims,
                                                     std::vector<uint8_t>(data.begin(), data.end()), shape.scale,
                                                     shape.zeroPoint);
    if (!shape.channelScales.empty()) builder_.setChannelQuant(operand, shape.channelScales, shape.channelDim);
    return operand;
  }

  // The operand an operation writes to tensor `index` (each tensor is written once).
  hal::Result<uint32_t> output(int32_t index, std::string_view what) {
    SABLE_ASSIGN_OR_RETURN(const fb::Tensor* tensor, tensorAt(index, what));
    if (operands_[index]) return importError("{}: tensor {} is written twice or is a subgraph input", what, index);
    SABLE_ASSIGN_OR_RETURN(const auto* data, constantData(index));
    if (data != nullptr) return importError("{}: tensor {} has constant data", what, index);
    SABLE_ASSIGN_OR_RETURN(Shape shape, operandShape(index, *tensor));
    if (!shape.channelScales.empty())
      return importError("{}: tensor {} is quantized per channel (only constants may be)", what, index);
    const uint32_t operand = builder_.addTemporary(shape.type, shape.dims, shape.scale, shape.zeroPoint);
    operands_[index] = operand;
    return operand;
  }

  // The operand of an index-valued output (ARG_MAX/ARG_MIN): TFLite writes int32 or int64, NNAPI
  // only int32, so an int64 tensor becomes TENSOR_INT32 as the delegate does (same values; the
  // imported model's output is then int32).
  hal::Result<uint32_t> indexOutput(int32_t index, std::string_view what) {
    SABLE_ASSIGN_OR_RETURN(const fb::Tensor* tensor, tensorAt(index, what));
    if (tensor->type() != fb::TensorType::INT32 && tensor->type() != fb::TensorType::INT64)
      return importError("{}: tensor {} must be int32 or int64", what, index);
    if (operands_[index]) return importError("{}: tensor {} is written twice or is a subgraph input", what, index);
    SABLE_ASSIGN_OR_RETURN(const auto* data, constantData(index));
    if (data != nullptr) return importError("{}: tensor {} has constant data", what, index);
    if (tensor->shape() == nullptr || tensor->shape()->size() > kMaxRank)
      return importError("{}: tensor {} has no valid shape", what, index);
    std::vector<uint32_t> dims;
    for (int32_t d : *tensor->shape()) {
      if (d <= 0 || d > kMaxDimension)
        return importError("{}: tensor {} has dimension {} (each must be in 1..{})", what, index, d, kMaxDimension);
      dims.push_back(static_cast<uint32_t>(d));
    }
    if (dims.empty()) dims.push_back(1);
    const auto bytes = hal::sizeOfData(OperandType::TENSOR_INT32, dims);
    if (!bytes || *bytes > kMaxTensorBytes) return importError("{}: tensor {} is too large", what, index);
    const uint32_t operand = builder_.addTemporary(OperandType::TENSOR_INT32, dims);
    operands_[index] = operand;
    return operand;
  }

  const hal::Operand& operand(uint32_t index) { return builder_.model().main.operands[index]; }

  // Tensor `index` as a TENSOR_FLOAT32 operand, for operators mapped to NNAPI's float operations
  // (UNIDIRECTIONAL_SEQUENCE_LSTM): a float activation as it is, a quantized one through
  // DEQUANTIZE, a constant dequantized here (real = scale × (q − zero point), int32 biases with
  // their own scale), and a variable tensor without data (TFLite's recurrent state, zero at the
  // start of each invocation) as zeros.
  hal::Result<uint32_t> floatInput(int32_t index, std::string_view what) {
    SABLE_ASSIGN_OR_RETURN(const fb::Tensor* tensor, tensorAt(index, what));
    if (operands_[index]) {
      const hal::Operand source = operand(*operands_[index]);
      if (source.type == OperandType::TENSOR_FLOAT32) return *operands_[index];
      if (source.type != OperandType::TENSOR_QUANT8_ASYMM && source.type != OperandType::TENSOR_QUANT8_ASYMM_SIGNED)
        return importError("{}: tensor {} is {} (float32 or 8-bit quantized)", what, index, hal::toString(source.type));
      const uint32_t real = builder_.addTemporary(OperandType::TENSOR_FLOAT32, source.dimensions);
      builder_.addOperation(OperationType::DEQUANTIZE, {*operands_[index]}, {real});
      return real;
    }
    SABLE_ASSIGN_OR_RETURN(const auto* data, constantData(index));
    if (data == nullptr && !tensor->is_variable())
      return importError("{}: tensor {} is read before any operator writes it", what, index);
    if (data == nullptr) {
      if (tensor->shape() == nullptr || tensor->shape()->size() == 0 || tensor->shape()->size() > kMaxRank)
        return importError("{}: variable tensor {} has no valid shape", what, index);
      std::vector<uint32_t> dims;
      for (int32_t d : *tensor->shape()) {
        if (d <= 0 || d > kMaxDimension) return importError("{}: variable tensor {} has dimension {}", what, index, d);
        dims.push_back(static_cast<uint32_t>(d));
      }
      const auto bytes = hal::sizeOfData(OperandType::TENSOR_FLOAT32, dims);
      if (!bytes || *bytes > kMaxStateBytes)
        return importError("{}: variable tensor {} of {} is too large for a recurrent state (at most {} bytes in "
                           "float32)", what, index, fmt::join(dims, "x"), kMaxStateBytes);
      return builder_.addConstant<float>(OperandType::TENSOR_FLOAT32, dims, std::vector<float>(*bytes / 4, 0.0f));
    }
    SABLE_ASSIGN_OR_RETURN(auto real, realConstant(index, what));
    return builder_.addConstant<float>(OperandType::TENSOR_FLOAT32, real.first, real.second);
  }

  // The real values of constant tensor `index` and its dimensions: float32 as stored, 8-bit and
  // int16 dequantized (real = scale × (q − zero point)), int32 with its own scale.
  hal::Result<std::pair<std::vector<uint32_t>, std::vector<float>>> realConstant(int32_t index, std::string_view what) {
    SABLE_ASSIGN_OR_RETURN(const fb::Tensor* tensor, tensorAt(index, what));
    SABLE_ASSIGN_OR_RETURN(const auto* data, constantData(index));
    if (data == nullptr) return importError("{}: tensor {} must be a constant", what, index);
    SABLE_ASSIGN_OR_RETURN(Shape shape, operandShape(index, *tensor));
    if (!shape.channelScales.empty())
      return importError("{}: tensor {} is quantized per channel (only per-tensor here)", what, index);
    const size_t expected = *hal::sizeOfData(shape.type, shape.dims);
    if (data->size() != expected)
      return importError("{}: tensor {}: buffer holds {} bytes, the tensor needs {}", what, index, data->size(), expected);
    const size_t width = hal::sizeOfElement(shape.type);
    if (width == 0) return importError("{}: tensor {} has no element size", what, index);
    std::vector<float> values(expected / width);
    const uint8_t* raw = data->data();
    for (size_t i = 0; i < values.size(); ++i) {
      switch (shape.type) {
        case OperandType::TENSOR_FLOAT32: std::memcpy(&values[i], raw + 4 * i, 4); break;
        case OperandType::TENSOR_QUANT8_ASYMM: values[i] = shape.scale * static_cast<float>(raw[i] - shape.zeroPoint); break;
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
          values[i] = shape.scale * static_cast<float>(static_cast<int8_t>(raw[i]) - shape.zeroPoint);
          break;
        case OperandType::TENSOR_QUANT16_SYMM: {
          int16_t v;
          std::memcpy(&v, raw + 2 * i, 2);
          values[i] = shape.scale * static_cast<float>(v);
          break;
        }
        case OperandType::TENSOR_INT32: {
          if (!(shape.scale > 0.0f)) return importError("{}: int32 tensor {} has no quantization scale", what, index);
          int32_t v;
          std::memcpy(&v, raw + 4 * i, 4);
          values[i] = static_cast<float>(static_cast<double>(shape.scale) * v);
          break;
        }
        default:
          return importError("{}: tensor {} is {} (not dequantized here)", what, index, hal::toString(shape.type));
      }
    }
    return std::pair{shape.dims, std::move(values)};
  }

  // The integer values of a constant INT32 or INT64 tensor (axes, paddings, permutations).
  hal::Result<std::vector<int64_t>> constantInts(int32_t index, std::string_view what) const {
    SABLE_ASSIGN_OR_RETURN(const fb::Tensor* tensor, tensorAt(index, what));
    SABLE_ASSIGN_OR_RETURN(const auto* data, constantData(index));
    if (data == nullptr) return importError("{}: tensor {} must be a constant", what, index);
    size_t elements = 1;
    if (tensor->shape() == nullptr || tensor->shape()->size() > kMaxRank)
      return importError("{}: tensor {} has no valid shape", what, index);
    for (int32_t d : *tensor->shape()) {
      if (d < 0 || d > kMaxDimension) return importError("{}: tensor {} has dimension {}", what, index, d);
      elements *= static_cast<size_t>(d);
    }
    size_t width = 0;
    if (tensor->type() == fb::TensorType::INT32) width = 4;
    else if (tensor->type() == fb::TensorType::INT64) width = 8;
    else return importError("{}: tensor {} must be int32 or int64", what, index);
    if (elements > 4096 || data->size() != elements * width)
      return importError("{}: tensor {} holds {} bytes for {} elements", what, index, data->size(), elements);
    std::vector<int64_t> values(elements);
    for (size_t i = 0; i < elements; ++i) {
      if (width == 4) {
        int32_t v;
        std::memcpy(&v, data->data() + i * 4, 4);
        values[i] = v;
      } else {
        std::memcpy(&values[i], data->data() + i * 8, 8);
      }
    }
    return values;
  }

  uint32_t int32Tensor(const std::vector<int32_t>& values) {
    return builder_.addConstant<int32_t>(OperandType::TENSOR_INT32, {static_cast<uint32_t>(values.size())}, values);
  }

  // --- operators ---------------------------------------------------------------------------------

  struct Op {
    uint32_t index;
    std::string_view name;
    const fb::Operator& op;
    std::vector<int32_t> inputs;
    std::vector<int32_t> outputs;
  };

  // Tensor index of input i, or -1 when the operator lists fewer inputs (an omitted optional one).
  static int32_t optionalInput(const Op& op, size_t i) { return i < op.inputs.size() ? op.inputs[i] : -1; }

  hal::Result<void> expectCounts(const Op& op, size_t minInputs, size_t maxInputs, size_t outputs) const {
    if (op.inputs.size() < minInputs || op.inputs.size() > maxInputs)
      return importError("operator {} ({}): {} inputs (expected {}..{})", op.index, op.name, op.inputs.size(),
                         minInputs, maxInputs);
    if (op.outputs.size() != outputs)
      return importError("operator {} ({}): {} outputs (expected {})", op.index, op.name, op.outputs.size(), outputs);
    return {};
  }

  // The rank of tensor `index` in the file (0 for a scalar, which is a [1] operand here); the
  // index has been checked (the tensor was read through input()).
  size_t tfliteRank(int32_t index) const {
    const fb::Tensor* tensor = tensors_->Get(static_cast<uint32_t>(index));
    return tensor->shape() == nullptr ? 0 : tensor->shape()->size();
  }

  // The output operand `y` must have the shape the operator computes from its inputs.
  hal::Result<void> expectShape(const Op& op, uint32_t y, const std::vector<uint32_t>& expected) {
    if (operand(y).dimensions != expected)
      return importError("operator {} ({}): output shape {}, the inputs give {}", op.index, op.name,
                         operand(y).dimensions, expected);
    return {};
  }

  // Operators that copy quantized values (GATHER_ND, PACK, UNPACK) need the output's quantization
  // equal to the input's, as TFLite's kernels require.
  hal::Result<void> expectSameQuantization(const Op& op, uint32_t y, uint32_t x) {
    const hal::Operand& in = operand(x);
    const hal::Operand& o = operand(y);
    if (in.type != o.type)
      return importError("operator {} ({}): output type {}, input type {}", op.index, op.name, hal::toString(o.type),
                         hal::toString(in.type));
    if (in.scale != o.scale || in.zeroPoint != o.zeroPoint)
      return importError("operator {} ({}): output quantization (scale {}, zero point {}) differs from the input's ({}, {})",
                         op.index, op.name, o.scale, o.zeroPoint, in.scale, in.zeroPoint);
    return {};
  }

  // An index input (GATHER_ND's): an int32 tensor as it is, a constant int64 one narrowed to
  // TENSOR_INT32 (NNAPI reads int32; each value checked to fit), a non-constant int64 one refused.
  hal::Result<uint32_t> int32Indices(const Op& op, size_t i) {
    const std::string what = fmt::format("operator {} ({}) input {}", op.index, op.name, i);
    if (i >= op.inputs.size()) return importError("{}: missing", what);
    SABLE_ASSIGN_OR_RETURN(const fb::Tensor* tensor, tensorAt(op.inputs[i], what));
    if (tensor->type() != fb::TensorType::INT64) {
      SABLE_ASSIGN_OR_RETURN(uint32_t indices, input(op.inputs[i], what));
      if (operand(indices).type != OperandType::TENSOR_INT32)
        return importError("{}: indices must be int32 or int64, are {}", what, hal::toString(operand(indices).type));
      return indices;
    }
    SABLE_ASSIGN_OR_RETURN(const auto* data, constantData(op.inputs[i]));
    if (data == nullptr) return importError("{}: int64 indices must be a constant (NNAPI reads int32)", what);
    SABLE_ASSIGN_OR_RETURN(auto values, constantInts(op.inputs[i], what));
    std::vector<int32_t> narrow;
    for (int64_t v : values) {
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
        return importError("{}: index {} does not fit in int32", what, v);
      narrow.push_back(static_cast<int32_t>(v));
    }
    std::vector<uint32_t> dims;
    for (int32_t d : *tensor->shape()) dims.push_back(static_cast<uint32_t>(d));
    if (dims.empty()) dims.push_back(1);
    return builder_.addConstant<int32_t>(OperandType::TENSOR_INT32, dims, narrow);
  }

  template <typename Options>
  hal::Result<const Options*> options(const Op& op) const {
    const auto* options = op.op.template builtin_options_as<Options>();
    if (options == nullptr)
      return importError("operator {} ({}): missing or wrong builtin options", op.index, op.name);
    return options;
  }

  hal::Result<int32_t> fuseCode(const Op& op, fb::ActivationFunctionType activation) const {
    switch (activation) {
      case fb::ActivationFunctionType::NONE: return kFuseNone;
      case fb::ActivationFunctionType::RELU: return kFuseRelu;
      case fb::ActivationFunctionType::RELU_N1_TO_1: return kFuseRelu1;
      case fb::ActivationFunctionType::RELU6: return kFuseRelu6;
      default:
        return importError("operator {} ({}): fused activation {} (NNAPI fuses only RELU, RELU1, RELU6)", op.index,
                           op.name, static_cast<int>(activation));
    }
  }

  hal::Result<int32_t> paddingCode(const Op& op, fb::Padding padding) const {
    switch (padding) {
      case fb::Padding::SAME: return kPaddingSame;
      case fb::Padding::VALID: return kPaddingValid;
      default: return importError("operator {} ({}): padding {}", op.index, op.name, static_cast<int>(padding));
    }
  }

  // The bias of a convolution or fully connected operator (tensor `index`, input 2 but input 3 of
  // TRANSPOSE_CONV): TFLite's int32 tensor with the scale NNAPI requires (input scale × filter
  // scale, or 0 beside a per-channel filter), or zeros when the operator has none (index -1), as
  // the delegate adds them.
  hal::Result<uint32_t> bias(const Op& op, uint32_t activation, uint32_t filter, uint32_t channels, int32_t index) {
    const hal::Operand& in = operand(activation);
    const hal::Operand& f = operand(filter);
    const bool isFloat = in.type == OperandType::TENSOR_FLOAT32 || in.type == OperandType::TENSOR_FLOAT16;
    const OperandType type = isFloat ? in.type : OperandType::TENSOR_INT32;
    const float scale = isFloat || f.channelQuant() != nullptr ? 0.0f : in.scale * f.scale;
    if (index < 0) {
      std::vector<uint8_t> zeros(*hal::sizeOfData(type, {channels}), 0);
      return builder_.addConstant<uint8_t>(type, {channels}, zeros, scale, 0);
    }
    SABLE_ASSIGN_OR_RETURN(const fb::Tensor* tensor, tensorAt(index, "bias"));
    SABLE_ASSIGN_OR_RETURN(const auto* data, constantData(index));
    if (data == nullptr) {
      SABLE_ASSIGN_OR_RETURN(uint32_t b, input(index, "bias"));
      return b;
    }
    SABLE_ASSIGN_OR_RETURN(Shape shape, operandShape(index, *tensor));
    if (shape.type != type)
      return importError("operator {} ({}): bias tensor {} has type {}, expected {}", op.index, op.name, index,
                         hal::toString(shape.type), hal::toString(type));
    // A fresh operand per use: the same bias tensor read beside different filters needs different scales.
    shape.scale = scale;
    shape.zeroPoint = 0;
    return addConstant(index, shape, *data);
  }

  hal::Result<void> mapOperator(uint32_t index, const fb::Operator& fbOp) {
    const auto* codes = model_.operator_codes();
    if (codes == nullptr || fbOp.opcode_index() >= codes->size())
      return importError("operator {}: opcode index {} out of range (the model has {} operator codes)", index,
                         fbOp.opcode_index(), codes == nullptr ? 0 : codes->size());
    const fb::OperatorCode* code = codes->Get(fbOp.opcode_index());
    if (code == nullptr) return importError("operator {}: operator code {} is null", index, fbOp.opcode_index());
    // Files before schema 3a store the operator only in the (byte) deprecated field; later ones in
    // both, or only in builtin_code when it is past 127: the larger of the two is the operator.
    const int32_t builtin =
        std::max(static_cast<int32_t>(code->deprecated_builtin_code()), static_cast<int32_t>(code->builtin_code()));
    if (builtin == static_cast<int32_t>(fb::BuiltinOperator::CUSTOM)) {
      const std::string_view custom = code->custom_code() != nullptr ? code->custom_code()->string_view() : "";
      if (custom != kDetectionPostProcess)
        return importError("operator {}: custom operator '{}' is not supported", index, custom);
      if (code->version() != 1)
        return importError("operator {} ({}): version {} is not supported (version 1)", index, custom, code->version());
      Op o{index, custom, fbOp, {}, {}};
      if (fbOp.inputs() != nullptr) o.inputs.assign(fbOp.inputs()->begin(), fbOp.inputs()->end());
      if (fbOp.outputs() != nullptr) o.outputs.assign(fbOp.outputs()->begin(), fbOp.outputs()->end());
      return mapDetectionPostProcess(o);
    }
    const auto op = static_cast<fb::BuiltinOperator>(builtin);
    std::string_view name = operatorName(builtin);
    const auto maxVersion = maxSupportedVersion(op);
    if (!maxVersion) {
      return importError("operator {}: builtin operator {}{}{} is not supported", index, builtin, name.empty() ? "" : " ",
                         name);
    }
    if (code->version() < 1 || code->version() > *maxVersion)
      return importError("operator {} ({}): version {} is not supported (versions 1..{})", index, name,
                         code->version(), *maxVersion);
    Op o{index, name, fbOp, {}, {}};
    if (fbOp.inputs() != nullptr) o.inputs.assign(fbOp.inputs()->begin(), fbOp.inputs()->end());
    if (fbOp.outputs() != nullptr) o.outputs.assign(fbOp.outputs()->begin(), fbOp.outputs()->end());
    auto result = mapBuiltin(op, o);
    if (!result.ok()) return std::move(result).error();
    return {};
  }

  // An operator whose NNAPI operation takes the same tensors plus scalars `extra`.
  hal::Result<void> emit(const Op& op, OperationType type, std::vector<uint32_t> inputs, std::vector<uint32_t> extra,
                         uint32_t out) {
    inputs.insert(inputs.end(), extra.begin(), extra.end());
    builder_.addOperation(type, std::move(inputs), {out});
    (void)op;
    return {};
  }

  hal::Result<void> mapBuiltin(fb::BuiltinOperator code, const Op& op) {
    using B = fb::BuiltinOperator;
    auto in = [&](size_t i) -> hal::Result<uint32_t> {
      if (i >= op.inputs.size()) return importError("operator {} ({}): missing input {}", op.index, op.name, i);
      return input(op.inputs[i], fmt::format("operator {} ({}) input {}", op.index, op.name, i));
    };
    auto out = [&]() { return output(op.outputs[0], fmt::format("operator {} ({}) output", op.index, op.name)); };

    switch (code) {
      case B::CONV_2D: {
        SABLE_TRY(expectCounts(op, 2, 3, 1));
        SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::Conv2DOptions>(op));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t w, in(1));
        if (operand(w).dimensions.size() != 4) return importError("operator {} (CONV_2D): filter is not 4-D", op.index);
        SABLE_ASSIGN_OR_RETURN(uint32_t b, bias(op, x, w, operand(w).dimensions[0], optionalInput(op, 2)));
        SABLE_ASSIGN_OR_RETURN(int32_t padding, paddingCode(op, o->padding()));
        SABLE_ASSIGN_OR_RETURN(int32_t fuse, fuseCode(op, o->fused_activation_function()));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        std::vector<uint32_t> scalars = {builder_.addInt32(padding), builder_.addInt32(o->stride_w()),
                                         builder_.addInt32(o->stride_h()), builder_.addInt32(fuse)};
        if (o->dilation_w_factor() != 1 || o->dilation_h_factor() != 1) {
          scalars.push_back(builder_.addBool(false));  // NHWC
          scalars.push_back(builder_.addInt32(o->dilation_w_factor()));
          scalars.push_back(builder_.addInt32(o->dilation_h_factor()));
        }
        return emit(op, OperationType::CONV_2D, {x, w, b}, scalars, y);
      }
      case B::DEPTHWISE_CONV_2D: {
        SABLE_TRY(expectCounts(op, 2, 3, 1));
        SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::DepthwiseConv2DOptions>(op));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t w, in(1));
        if (operand(w).dimensions.size() != 4 || operand(x).dimensions.size() != 4)
          return importError("operator {} (DEPTHWISE_CONV_2D): input or filter is not 4-D", op.index);
        const uint32_t outChannels = operand(w).dimensions[3];
        const uint32_t inChannels = operand(x).dimensions[3];
        // TFLite's kernel derives the multiplier from the shapes (newer converters write 0 in the
        // option); NNAPI needs it explicitly and checks it against the shapes.
        if (inChannels == 0 || outChannels % inChannels != 0)
          return importError("operator {} (DEPTHWISE_CONV_2D): {} filter channels for {} input channels", op.index,
                             outChannels, inChannels);
        const int32_t multiplier = static_cast<int32_t>(outChannels / inChannels);
        if (o->depth_multiplier() != 0 && o->depth_multiplier() != multiplier)
          return importError("operator {} (DEPTHWISE_CONV_2D): depth multiplier {} but the shapes give {}", op.index,
                             o->depth_multiplier(), multiplier);
        SABLE_ASSIGN_OR_RETURN(uint32_t b, bias(op, x, w, outChannels, optionalInput(op, 2)));
        SABLE_ASSIGN_OR_RETURN(int32_t padding, paddingCode(op, o->padding()));
        SABLE_ASSIGN_OR_RETURN(int32_t fuse, fuseCode(op, o->fused_activation_function()));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        std::vector<uint32_t> scalars = {builder_.addInt32(padding), builder_.addInt32(o->stride_w()),
                                         builder_.addInt32(o->stride_h()), builder_.addInt32(multiplier),
                                         builder_.addInt32(fuse)};
        if (o->dilation_w_factor() != 1 || o->dilation_h_factor() != 1) {
          scalars.push_back(builder_.addBool(false));
          scalars.push_back(builder_.addInt32(o->dilation_w_factor()));
          scalars.push_back(builder_.addInt32(o->dilation_h_factor()));
        }
        return emit(op, OperationType::DEPTHWISE_CONV_2D, {x, w, b}, scalars, y);
      }
      case B::TRANSPOSE_CONV: {
        // TFLite: (output shape, weights [outC, fh, fw, inC], input, bias since version 3).
        // NNAPI's TRANSPOSE_CONV_2D with explicit padding: TFLite's head padding (SAME: half the
        // total of a forward convolution from the output to the input, rounded down; VALID: 0)
        // and a tail that makes the output exactly the output tensor's size (negative when the
        // scatter falls short of it, where TFLite leaves only the bias). With consistent shapes
        // that is the padding the delegate's implicit form gives.
        SABLE_TRY(expectCounts(op, 3, 4, 1));
        SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::TransposeConvOptions>(op));
        SABLE_ASSIGN_OR_RETURN(auto shape, constantInts(op.inputs[0], fmt::format("operator {} output shape", op.index)));
        SABLE_ASSIGN_OR_RETURN(uint32_t w, in(1));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(2));
        const std::vector<uint32_t> wd = operand(w).dimensions, xd = operand(x).dimensions;
        if (wd.size() != 4 || xd.size() != 4)
          return importError("operator {} (TRANSPOSE_CONV): input is rank {} and weights rank {} (4 and 4)", op.index,
                             xd.size(), wd.size());
        if (wd[3] != xd[3])
          return importError("operator {} (TRANSPOSE_CONV): weights of depth {} for an input of depth {}", op.index,
                             wd[3], xd[3]);
        if (const auto* q = operand(w).channelQuant(); q != nullptr && q->channelDim != 0)
          return importError("operator {} (TRANSPOSE_CONV): weights quantized along dimension {} (0, the output "
                             "channels)", op.index, q->channelDim);
        if (o->stride_w() < 1 || o->stride_h() < 1 || o->stride_w() > kMaxDimension || o->stride_h() > kMaxDimension)
          return importError("operator {} (TRANSPOSE_CONV): strides {} x {}", op.index, o->stride_w(), o->stride_h());
        SABLE_ASSIGN_OR_RETURN(int32_t fuse, fuseCode(op, o->fused_activation_function()));
        if (o->padding() != fb::Padding::SAME && o->padding() != fb::Padding::VALID)
          return importError("operator {} (TRANSPOSE_CONV): padding {}", op.index, static_cast<int>(o->padding()));
        SABLE_ASSIGN_OR_RETURN(uint32_t b, bias(op, x, w, wd[0], optionalInput(op, 3)));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        const std::vector<uint32_t> yd = operand(y).dimensions;
        const std::vector<uint32_t> expected = {xd[0], yd.size() == 4 ? yd[1] : 0, yd.size() == 4 ? yd[2] : 0, wd[0]};
        if (shape.size() != 4 || yd != expected || !std::equal(yd.begin(), yd.end(), shape.begin()))
          return importError("operator {} (TRANSPOSE_CONV): output shape [{}] and output tensor {} for input {} and "
                             "weights {}", op.index, fmt::join(shape, ", "), fmt::join(yd, "x"), fmt::join(xd, "x"),
                             fmt::join(wd, "x"));
        // Per axis: (input extent, filter extent, stride, output extent) → head and tail padding.
        auto pads = [&](int64_t inSize, int64_t filter, int64_t stride, int64_t outSize) {
          int64_t head = 0;
          if (o->padding() == fb::Padding::SAME) {
            const int64_t total = ((outSize + stride - 1) / stride - 1) * stride + filter - outSize;
            head = total > 0 ? total / 2 : 0;
          }
          return std::pair<int64_t, int64_t>{head, inSize * stride + filter - stride - head - outSize};
        };
        const auto [left, right] = pads(xd[2], wd[2], o->stride_w(), yd[2]);
        const auto [top, bottom] = pads(xd[1], wd[1], o->stride_h(), yd[1]);
        for (int64_t p : {left, right, top, bottom})
          if (p != static_cast<int32_t>(p))
            return importError("operator {} (TRANSPOSE_CONV): padding {} out of range", op.index, p);
        return emit(op, OperationType::TRANSPOSE_CONV_2D, {x, w, b},
                    {builder_.addInt32(static_cast<int32_t>(left)), builder_.addInt32(static_cast<int32_t>(right)),
                     builder_.addInt32(static_cast<int32_t>(top)), builder_.addInt32(static_cast<int32_t>(bottom)),
                     builder_.addInt32(o->stride_w()), builder_.addInt32(o->stride_h()), builder_.addInt32(fuse),
                     builder_.addBool(false)},
                    y);
      }
      case B::FULLY_CONNECTED: {
        SABLE_TRY(expectCounts(op, 2, 3, 1));
        SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::FullyConnectedOptions>(op));
        if (o->weights_format() != fb::FullyConnectedOptionsWeightsFormat::DEFAULT)
          return importError("operator {} (FULLY_CONNECTED): shuffled weights are not supported", op.index);
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t w, in(1));
        if (operand(w).dimensions.size() != 2)
          return importError("operator {} (FULLY_CONNECTED): weights are not 2-D", op.index);
        const uint32_t units = operand(w).dimensions[0];
        SABLE_ASSIGN_OR_RETURN(uint32_t b, bias(op, x, w, units, optionalInput(op, 2)));
        SABLE_ASSIGN_OR_RETURN(int32_t fuse, fuseCode(op, o->fused_activation_function()));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        const hal::Operand result = operand(y);
        if (result.dimensions.size() == 2) return emit(op, OperationType::FULLY_CONNECTED, {x, w, b}, {builder_.addInt32(fuse)}, y);
        // keep_num_dims: NNAPI's output is [batch, units]; reshape it to TFLite's output shape.
        uint64_t elements = 1;
        for (uint32_t d : result.dimensions) elements *= d;
        if (elements % units != 0) return importError("operator {} (FULLY_CONNECTED): output shape", op.index);
        const uint32_t flat = builder_.addTemporary(result.type, {static_cast<uint32_t>(elements / units), units},
                                                    result.scale, result.zeroPoint);
        builder_.addOperation(OperationType::FULLY_CONNECTED, {x, w, b, builder_.addInt32(fuse)}, {flat});
        std::vector<int32_t> dims(result.dimensions.begin(), result.dimensions.end());
        builder_.addOperation(OperationType::RESHAPE, {flat, int32Tensor(dims)}, {y});
        return {};
      }
      case B::AVERAGE_POOL_2D:
      case B::MAX_POOL_2D: {
        SABLE_TRY(expectCounts(op, 1, 1, 1));
        SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::Pool2DOptions>(op));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(int32_t padding, paddingCode(op, o->padding()));
        SABLE_ASSIGN_OR_RETURN(int32_t fuse, fuseCode(op, o->fused_activation_function()));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        return emit(op, code == B::AVERAGE_POOL_2D ? OperationType::AVERAGE_POOL_2D : OperationType::MAX_POOL_2D, {x},
                    {builder_.addInt32(padding), builder_.addInt32(o->stride_w()), builder_.addInt32(o->stride_h()),
                     builder_.addInt32(o->filter_width()), builder_.addInt32(o->filter_height()),
                     builder_.addInt32(fuse)},
                    y);
      }
      case B::ADD:
      case B::MUL:
      case B::SUB: {
        SABLE_TRY(expectCounts(op, 2, 2, 1));
        fb::ActivationFunctionType activation = fb::ActivationFunctionType::NONE;
        // The options table is optional in files (defaults: no activation).
        if (code == B::ADD) {
          if (const auto* o = op.op.builtin_options_as_AddOptions()) activation = o->fused_activation_function();
        } else if (code == B::MUL) {
          if (const auto* o = op.op.builtin_options_as_MulOptions()) activation = o->fused_activation_function();
        } else if (const auto* o = op.op.builtin_options_as_SubOptions()) {
          activation = o->fused_activation_function();
        }
        SABLE_ASSIGN_OR_RETURN(uint32_t a, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t b, in(1));
        SABLE_ASSIGN_OR_RETURN(int32_t fuse, fuseCode(op, activation));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        const OperationType type =
            code == B::ADD ? OperationType::ADD : code == B::MUL ? OperationType::MUL : OperationType::SUB;
        return emit(op, type, {a, b}, {builder_.addInt32(fuse)}, y);
      }
      case B::RELU:
      case B::RELU6:
      case B::RELU_N1_TO_1:
      case B::LOGISTIC:
      case B::TANH:
      case B::HARD_SWISH: {
        SABLE_TRY(expectCounts(op, 1, 1, 1));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        const OperationType type = code == B::RELU           ? OperationType::RELU
                                   : code == B::RELU6        ? OperationType::RELU6
                                   : code == B::RELU_N1_TO_1 ? OperationType::RELU1
                                   : code == B::LOGISTIC     ? OperationType::LOGISTIC
                                   : code == B::TANH         ? OperationType::TANH
                                                             : OperationType::HARD_SWISH;
        return emit(op, type, {x}, {}, y);
      }
      case B::SOFTMAX: {
        SABLE_TRY(expectCounts(op, 1, 1, 1));
        SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::SoftmaxOptions>(op));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        const uint32_t beta = operand(x).type == OperandType::TENSOR_FLOAT16 ? builder_.addFloat16(o->beta())
                                                                             : builder_.addFloat32(o->beta());
        return emit(op, OperationType::SOFTMAX, {x}, {beta}, y);
      }
      case B::RESHAPE: {
        // The new shape is the output tensor's: TFLite gives it as an option, an input tensor or
        // both, and all must agree with the (static) output shape, as the delegate assumes.
        SABLE_TRY(expectCounts(op, 1, 2, 1));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        std::vector<int32_t> dims(operand(y).dimensions.begin(), operand(y).dimensions.end());
        return emit(op, OperationType::RESHAPE, {x}, {int32Tensor(dims)}, y);
      }
      case B::SQUEEZE: {
        SABLE_TRY(expectCounts(op, 1, 1, 1));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        const auto rank = static_cast<int32_t>(operand(x).dimensions.size());
        std::vector<int32_t> axes;
        const auto* o = op.op.builtin_options_as_SqueezeOptions();
        if (o != nullptr && o->squeeze_dims() != nullptr && o->squeeze_dims()->size() > 0) {
          for (int32_t axis : *o->squeeze_dims()) {
            if (axis < -rank || axis >= rank)
              return importError("operator {} (SQUEEZE): axis {} outside rank {}", op.index, axis, rank);
            axes.push_back(axis < 0 ? axis + rank : axis);
          }
        } else {
          for (int32_t d = 0; d < rank; ++d)
            if (operand(x).dimensions[d] == 1) axes.push_back(d);
        }
        if (axes.empty()) {  // nothing to squeeze: NNAPI has no empty axis tensor, a RESHAPE does it
          std::vector<int32_t> dims(operand(y).dimensions.begin(), operand(y).dimensions.end());
          return emit(op, OperationType::RESHAPE, {x}, {int32Tensor(dims)}, y);
        }
        return emit(op, OperationType::SQUEEZE, {x}, {int32Tensor(axes)}, y);
      }
      case B::CONCATENATION: {
        if (op.inputs.empty()) return importError("operator {} (CONCATENATION): no inputs", op.index);
        SABLE_TRY(expectCounts(op, 1, 1024, 1));
        SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::ConcatenationOptions>(op));
        if (o->fused_activation_function() != fb::ActivationFunctionType::NONE)
          return importError("operator {} (CONCATENATION): a fused activation (NNAPI has none here)", op.index);
        std::vector<uint32_t> inputs;
        for (size_t i = 0; i < op.inputs.size(); ++i) {
          SABLE_ASSIGN_OR_RETURN(uint32_t x, in(i));
          inputs.push_back(x);
        }
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        const auto rank = static_cast<int32_t>(operand(y).dimensions.size());
        int32_t axis = o->axis();
        if (axis < -rank || axis >= rank)
          return importError("operator {} (CONCATENATION): axis {} outside rank {}", op.index, axis, rank);
        if (axis < 0) axis += rank;
        return emit(op, OperationType::CONCATENATION, inputs, {builder_.addInt32(axis)}, y);
      }
      case B::PAD:
      case B::PADV2: {
        SABLE_TRY(expectCounts(op, 2, code == B::PADV2 ? 3 : 2, 1));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(auto paddings, constantInts(op.inputs[1], fmt::format("operator {} paddings", op.index)));
        const size_t rank = operand(x).dimensions.size();
        if (paddings.size() != rank * 2)
          return importError("operator {} ({}): {} padding values for rank {}", op.index, op.name, paddings.size(), rank);
        std::vector<int32_t> values;
        for (int64_t p : paddings) {
          if (p < 0 || p > kMaxDimension) return importError("operator {} ({}): padding {}", op.index, op.name, p);
          values.push_back(static_cast<int32_t>(p));
        }
        const uint32_t padOperand = builder_.addConstant<int32_t>(OperandType::TENSOR_INT32,
                                                                  {static_cast<uint32_t>(rank), 2}, values);
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        if (code == B::PAD || op.inputs.size() < 3 || op.inputs[2] < 0)
          return emit(op, OperationType::PAD, {x}, {padOperand}, y);
        // PADV2's value: a one-element tensor of the input's type; NNAPI takes it as a scalar —
        // the quantized value itself (INT32) for quantized inputs, a FLOAT32 for float32.
        SABLE_ASSIGN_OR_RETURN(const fb::Tensor* valueTensor, tensorAt(op.inputs[2], "PADV2 value"));
        SABLE_ASSIGN_OR_RETURN(const auto* data, constantData(op.inputs[2]));
        if (data == nullptr) return importError("operator {} (PADV2): the pad value must be a constant", op.index);
        const OperandType type = operand(x).type;
        uint32_t value = 0;
        if (type == OperandType::TENSOR_QUANT8_ASYMM && valueTensor->type() == fb::TensorType::UINT8 &&
            data->size() == 1) {
          value = builder_.addInt32(data->Get(0));
        } else if (type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED && valueTensor->type() == fb::TensorType::INT8 &&
                   data->size() == 1) {
          value = builder_.addInt32(static_cast<int8_t>(data->Get(0)));
        } else if (type == OperandType::TENSOR_FLOAT32 && valueTensor->type() == fb::TensorType::FLOAT32 &&
                   data->size() == 4) {
          float f;
          std::memcpy(&f, data->data(), 4);
          value = builder_.addFloat32(f);
        } else {
          return importError("operator {} (PADV2): the pad value is not one element of the input's type", op.index);
        }
        return emit(op, OperationType::PAD_V2, {x}, {padOperand, value}, y);
      }
      case B::MEAN:
      case B::SUM:
      case B::REDUCE_PROD:
      case B::REDUCE_MAX:
      case B::REDUCE_MIN:
      case B::REDUCE_ANY: {
        SABLE_TRY(expectCounts(op, 2, 2, 1));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(auto axes, constantInts(op.inputs[1], fmt::format("operator {} axes", op.index)));
        const auto rank = static_cast<int64_t>(operand(x).dimensions.size());
        if (axes.empty()) return importError("operator {} ({}): no axes", op.index, op.name);
        std::vector<int32_t> values;
        for (int64_t a : axes) {
          if (a < -rank || a >= rank)
            return importError("operator {} ({}): axis {} outside rank {}", op.index, op.name, a, rank);
          values.push_back(static_cast<int32_t>(a < 0 ? a + rank : a));
        }
        const auto* o = op.op.builtin_options_as_ReducerOptions();
        const bool keepDims = o != nullptr && o->keep_dims();
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        // NNAPI's MEAN takes keep_dims as INT32, the REDUCE_* operations as BOOL.
        if (code == B::MEAN)
          return emit(op, OperationType::MEAN, {x}, {int32Tensor(values), builder_.addInt32(keepDims ? 1 : 0)}, y);
        const OperationType type = code == B::SUM           ? OperationType::REDUCE_SUM
                                   : code == B::REDUCE_PROD ? OperationType::REDUCE_PROD
                                   : code == B::REDUCE_MAX  ? OperationType::REDUCE_MAX
                                   : code == B::REDUCE_MIN  ? OperationType::REDUCE_MIN
                                                            : OperationType::REDUCE_ANY;
        return emit(op, type, {x}, {int32Tensor(values), builder_.addBool(keepDims)}, y);
      }
      case B::SPACE_TO_DEPTH:
      case B::DEPTH_TO_SPACE: {
        SABLE_TRY(expectCounts(op, 1, 1, 1));
        int32_t block = 0;
        if (code == B::SPACE_TO_DEPTH) {
          SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::SpaceToDepthOptions>(op));
          block = o->block_size();
        } else {
          SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::DepthToSpaceOptions>(op));
          block = o->block_size();
        }
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        const std::vector<uint32_t> d = operand(x).dimensions;
        if (d.size() != 4) return importError("operator {} ({}): input is rank {} (4, NHWC)", op.index, op.name, d.size());
        if (block < 1 || block > kMaxDimension) return importError("operator {} ({}): block size {}", op.index, op.name, block);
        const auto b = static_cast<uint32_t>(block);
        const std::vector<uint32_t> expected = code == B::SPACE_TO_DEPTH
                                                   ? std::vector<uint32_t>{d[0], d[1] / b, d[2] / b, d[3] * b * b}
                                                   : std::vector<uint32_t>{d[0], d[1] * b, d[2] * b, d[3] / (b * b)};
        if ((code == B::SPACE_TO_DEPTH && (d[1] % b != 0 || d[2] % b != 0)) ||
            (code == B::DEPTH_TO_SPACE && d[3] % (b * b) != 0))
          return importError("operator {} ({}): input {} does not divide by block size {}", op.index, op.name,
                             fmt::join(d, "x"), block);
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        if (operand(y).dimensions != expected)
          return importError("operator {} ({}): output {}, expected {}", op.index, op.name,
                             fmt::join(operand(y).dimensions, "x"), fmt::join(expected, "x"));
        return emit(op, code == B::SPACE_TO_DEPTH ? OperationType::SPACE_TO_DEPTH : OperationType::DEPTH_TO_SPACE, {x},
                    {builder_.addInt32(block)}, y);
      }
      case B::GATHER: {
        SABLE_TRY(expectCounts(op, 2, 2, 1));
        SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::GatherOptions>(op));
        if (o->batch_dims() != 0)
          return importError("operator {} (GATHER): batch_dims {} (NNAPI's GATHER has none)", op.index, o->batch_dims());
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        const auto rank = static_cast<int32_t>(operand(x).dimensions.size());
        int32_t axis = o->axis();
        if (axis < -rank || axis >= rank)
          return importError("operator {} (GATHER): axis {} outside rank {}", op.index, axis, rank);
        if (axis < 0) axis += rank;
        // Indices: an int32 tensor as it is; constant int64 indices narrowed (NNAPI reads int32).
        SABLE_ASSIGN_OR_RETURN(const fb::Tensor* indexTensor, tensorAt(op.inputs[1], "GATHER indices"));
        uint32_t indices = 0;
        if (indexTensor->type() == fb::TensorType::INT64) {
          SABLE_ASSIGN_OR_RETURN(auto values, constantInts(op.inputs[1], fmt::format("operator {} indices", op.index)));
          std::vector<int32_t> narrow;
          for (int64_t v : values) {
            if (v < 0 || v >= operand(x).dimensions[axis])
              return importError("operator {} (GATHER): index {} outside 0..{}", op.index, v,
                                 operand(x).dimensions[axis] - 1);
            narrow.push_back(static_cast<int32_t>(v));
          }
          std::vector<uint32_t> dims;
          for (int32_t d : *indexTensor->shape()) dims.push_back(static_cast<uint32_t>(d));
          if (dims.empty()) dims.push_back(1);
          indices = builder_.addConstant<int32_t>(OperandType::TENSOR_INT32, dims, narrow);
        } else {
          SABLE_ASSIGN_OR_RETURN(indices, in(1));
        }
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        return emit(op, OperationType::GATHER, {x, builder_.addInt32(axis), indices}, {}, y);
      }
      case B::SLICE: {
        SABLE_TRY(expectCounts(op, 3, 3, 1));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(auto begin, constantInts(op.inputs[1], fmt::format("operator {} begin", op.index)));
        SABLE_ASSIGN_OR_RETURN(auto size, constantInts(op.inputs[2], fmt::format("operator {} size", op.index)));
        const std::vector<uint32_t> d = operand(x).dimensions;
        if (begin.size() != d.size() || size.size() != d.size())
          return importError("operator {} (SLICE): {} begin and {} size values for rank {}", op.index, begin.size(),
                             size.size(), d.size());
        std::vector<int32_t> b32, s32;
        std::vector<uint32_t> expected;
        for (size_t i = 0; i < d.size(); ++i) {
          const int64_t end = size[i] == -1 ? d[i] : begin[i] + size[i];
          if (begin[i] < 0 || size[i] < -1 || size[i] == 0 || end > d[i])
            return importError("operator {} (SLICE): begin {} size {} on axis {} of size {}", op.index, begin[i],
                               size[i], i, d[i]);
          b32.push_back(static_cast<int32_t>(begin[i]));
          s32.push_back(static_cast<int32_t>(size[i]));
          expected.push_back(static_cast<uint32_t>(end - begin[i]));
        }
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        if (operand(y).dimensions != expected)
          return importError("operator {} (SLICE): output {}, expected {}", op.index, fmt::join(operand(y).dimensions, "x"),
                             fmt::join(expected, "x"));
        return emit(op, OperationType::SLICE, {x, int32Tensor(b32), int32Tensor(s32)}, {}, y);
      }
      case B::TILE: {
        SABLE_TRY(expectCounts(op, 2, 2, 1));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(auto multiples, constantInts(op.inputs[1], fmt::format("operator {} multiples", op.index)));
        if (multiples.size() != operand(x).dimensions.size())
          return importError("operator {} (TILE): {} multiples for rank {}", op.index, multiples.size(),
                             operand(x).dimensions.size());
        std::vector<int32_t> m32;
        for (int64_t m : multiples) {
          if (m < 1 || m > kMaxDimension) return importError("operator {} (TILE): multiple {}", op.index, m);
          m32.push_back(static_cast<int32_t>(m));
        }
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        std::vector<uint64_t> expected;
        for (size_t i = 0; i < m32.size(); ++i) expected.push_back(uint64_t{operand(x).dimensions[i]} * m32[i]);
        if (!std::equal(expected.begin(), expected.end(), operand(y).dimensions.begin(), operand(y).dimensions.end()))
          return importError("operator {} (TILE): output {}, expected {}", op.index, fmt::join(operand(y).dimensions, "x"),
                             fmt::join(expected, "x"));
        return emit(op, OperationType::TILE, {x, int32Tensor(m32)}, {}, y);
      }
      case B::SPLIT: {
        // TFLite: inputs (axis, tensor), num_splits outputs; NNAPI: (tensor, axis, num_splits).
        SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::SplitOptions>(op));
        const int32_t parts = o->num_splits();
        if (parts < 1 || static_cast<size_t>(parts) != op.outputs.size())
          return importError("operator {} (SPLIT): num_splits {} with {} outputs", op.index, parts, op.outputs.size());
        if (op.inputs.size() != 2) return importError("operator {} (SPLIT): {} inputs (expected 2)", op.index, op.inputs.size());
        SABLE_ASSIGN_OR_RETURN(auto axisValues, constantInts(op.inputs[0], fmt::format("operator {} axis", op.index)));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(1));
        const auto rank = static_cast<int64_t>(operand(x).dimensions.size());
        if (axisValues.size() != 1 || axisValues[0] < -rank || axisValues[0] >= rank)
          return importError("operator {} (SPLIT): the axis must be one value inside rank {}", op.index, rank);
        const auto axis = static_cast<int32_t>(axisValues[0] < 0 ? axisValues[0] + rank : axisValues[0]);
        if (operand(x).dimensions[axis] % static_cast<uint32_t>(parts) != 0)
          return importError("operator {} (SPLIT): axis {} of size {} does not split in {}", op.index, axis,
                             operand(x).dimensions[axis], parts);
        std::vector<uint32_t> outs;
        for (size_t k = 0; k < op.outputs.size(); ++k) {
          SABLE_ASSIGN_OR_RETURN(uint32_t y, output(op.outputs[k], fmt::format("operator {} (SPLIT) output {}", op.index, k)));
          outs.push_back(y);
        }
        builder_.addOperation(OperationType::SPLIT, {x, builder_.addInt32(axis), builder_.addInt32(parts)}, outs);
        return {};
      }
      case B::SPACE_TO_BATCH_ND:
      case B::BATCH_TO_SPACE_ND: {
        // NNAPI: (input, block shape [2], paddings [2, 2]) and (input, block shape [2]); TFLite's
        // BATCH_TO_SPACE_ND crops must be zero (NNAPI has none).
        SABLE_TRY(expectCounts(op, 3, 3, 1));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        if (operand(x).dimensions.size() != 4)
          return importError("operator {} ({}): input is rank {} (4, NHWC)", op.index, op.name,
                             operand(x).dimensions.size());
        SABLE_ASSIGN_OR_RETURN(auto block, constantInts(op.inputs[1], fmt::format("operator {} block shape", op.index)));
        SABLE_ASSIGN_OR_RETURN(auto pads, constantInts(op.inputs[2], fmt::format("operator {} paddings", op.index)));
        if (block.size() != 2 || pads.size() != 4)
          return importError("operator {} ({}): {} block values and {} paddings (2 and 2x2)", op.index, op.name,
                             block.size(), pads.size());
        std::vector<int32_t> block32, pads32;
        for (int64_t b : block) {
          if (b < 1 || b > kMaxDimension) return importError("operator {} ({}): block size {}", op.index, op.name, b);
          block32.push_back(static_cast<int32_t>(b));
        }
        for (int64_t p : pads) {
          if (p < 0 || p > kMaxDimension) return importError("operator {} ({}): padding {}", op.index, op.name, p);
          if (code == B::BATCH_TO_SPACE_ND && p != 0)
            return importError("operator {} (BATCH_TO_SPACE_ND): crop {} (NNAPI crops nothing)", op.index, p);
          pads32.push_back(static_cast<int32_t>(p));
        }
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        if (code == B::BATCH_TO_SPACE_ND) return emit(op, OperationType::BATCH_TO_SPACE_ND, {x, int32Tensor(block32)}, {}, y);
        const uint32_t padOperand = builder_.addConstant<int32_t>(OperandType::TENSOR_INT32, {2, 2}, pads32);
        return emit(op, OperationType::SPACE_TO_BATCH_ND, {x, int32Tensor(block32), padOperand}, {}, y);
      }
      case B::LOCAL_RESPONSE_NORMALIZATION: {
        SABLE_TRY(expectCounts(op, 1, 1, 1));
        SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::LocalResponseNormalizationOptions>(op));
        if (o->radius() < 0 || !std::isfinite(o->bias()) || !std::isfinite(o->alpha()) || !std::isfinite(o->beta()))
          return importError("operator {} (LOCAL_RESPONSE_NORMALIZATION): radius {}, bias {}, alpha {}, beta {}",
                             op.index, o->radius(), o->bias(), o->alpha(), o->beta());
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        return emit(op, OperationType::LOCAL_RESPONSE_NORMALIZATION, {x},
                    {builder_.addInt32(o->radius()), builder_.addFloat32(o->bias()), builder_.addFloat32(o->alpha()),
                     builder_.addFloat32(o->beta())},
                    y);
      }
      case B::STRIDED_SLICE: {
        SABLE_TRY(expectCounts(op, 4, 4, 1));
        SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::StridedSliceOptions>(op));
        if (o->ellipsis_mask() != 0 || o->new_axis_mask() != 0 || o->offset())
          return importError("operator {} (STRIDED_SLICE): ellipsis mask {}, new axis mask {}, offset {} (NNAPI has "
                             "none of them)", op.index, o->ellipsis_mask(), o->new_axis_mask(), o->offset());
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        const size_t rank = operand(x).dimensions.size();
        std::vector<int32_t> values[3];
        const char* names[3] = {"begin", "end", "strides"};
        for (size_t k = 0; k < 3; ++k) {
          SABLE_ASSIGN_OR_RETURN(auto v, constantInts(op.inputs[1 + k], fmt::format("operator {} {}", op.index, names[k])));
          if (v.size() != rank)
            return importError("operator {} (STRIDED_SLICE): {} {} values for rank {}", op.index, v.size(), names[k], rank);
          for (int64_t e : v) {
            if (e < -kMaxDimension || e > kMaxDimension || (k == 2 && e == 0))
              return importError("operator {} (STRIDED_SLICE): {} value {}", op.index, names[k], e);
            values[k].push_back(static_cast<int32_t>(e));
          }
        }
        const int32_t masks = (1 << rank) - 1;
        if ((o->begin_mask() & ~masks) != 0 || (o->end_mask() & ~masks) != 0 || (o->shrink_axis_mask() & ~masks) != 0)
          return importError("operator {} (STRIDED_SLICE): a mask names an axis past rank {}", op.index, rank);
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        return emit(op, OperationType::STRIDED_SLICE, {x},
                    {int32Tensor(values[0]), int32Tensor(values[1]), int32Tensor(values[2]),
                     builder_.addInt32(o->begin_mask()), builder_.addInt32(o->end_mask()),
                     builder_.addInt32(o->shrink_axis_mask())},
                    y);
      }
      case B::SPLIT_V: {
        // NNAPI has no SPLIT_V: one SLICE per output. Inputs (tensor, size_splits, axis); one size
        // may be -1 (the rest of the axis).
        SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::SplitVOptions>(op));
        if (op.inputs.size() != 3) return importError("operator {} (SPLIT_V): {} inputs (expected 3)", op.index, op.inputs.size());
        if (o->num_splits() < 1 || static_cast<size_t>(o->num_splits()) != op.outputs.size())
          return importError("operator {} (SPLIT_V): num_splits {} with {} outputs", op.index, o->num_splits(),
                             op.outputs.size());
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(auto sizes, constantInts(op.inputs[1], fmt::format("operator {} size_splits", op.index)));
        SABLE_ASSIGN_OR_RETURN(auto axisValues, constantInts(op.inputs[2], fmt::format("operator {} axis", op.index)));
        const std::vector<uint32_t> d = operand(x).dimensions;
        const auto rank = static_cast<int64_t>(d.size());
        if (axisValues.size() != 1 || axisValues[0] < -rank || axisValues[0] >= rank)
          return importError("operator {} (SPLIT_V): the axis must be one value inside rank {}", op.index, rank);
        const auto axis = static_cast<size_t>(axisValues[0] < 0 ? axisValues[0] + rank : axisValues[0]);
        if (sizes.size() != op.outputs.size())
          return importError("operator {} (SPLIT_V): {} sizes for {} outputs", op.index, sizes.size(), op.outputs.size());
        int64_t known = 0, inferred = -1;
        for (size_t k = 0; k < sizes.size(); ++k) {
          if (sizes[k] == -1 && inferred < 0) {
            inferred = static_cast<int64_t>(k);
          } else if (sizes[k] < 1 || sizes[k] > kMaxDimension) {
            return importError("operator {} (SPLIT_V): size {} (at least 1; one may be -1)", op.index, sizes[k]);
          } else {
            known += sizes[k];
          }
        }
        if (inferred >= 0) sizes[inferred] = d[axis] - known;
        if ((inferred >= 0 && sizes[inferred] < 1) || (inferred < 0 && known != d[axis]))
          return importError("operator {} (SPLIT_V): sizes sum to {} on an axis of {}", op.index, known, d[axis]);
        int32_t begin = 0;
        for (size_t k = 0; k < sizes.size(); ++k) {
          std::vector<int32_t> b(d.size(), 0), size(d.begin(), d.end());
          b[axis] = begin;
          size[axis] = static_cast<int32_t>(sizes[k]);
          begin += size[axis];
          SABLE_ASSIGN_OR_RETURN(uint32_t y, output(op.outputs[k], fmt::format("operator {} (SPLIT_V) output {}", op.index, k)));
          std::vector<uint32_t> expected(d);
          expected[axis] = static_cast<uint32_t>(sizes[k]);
          if (operand(y).dimensions != expected)
            return importError("operator {} (SPLIT_V): output {} is {}, expected {}", op.index, k,
                               fmt::join(operand(y).dimensions, "x"), fmt::join(expected, "x"));
          builder_.addOperation(OperationType::SLICE, {x, int32Tensor(b), int32Tensor(size)}, {y});
        }
        return {};
      }
      case B::LOG_SOFTMAX: {
        // TFLite's LOG_SOFTMAX is over the last axis with beta 1.
        SABLE_TRY(expectCounts(op, 1, 1, 1));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        const uint32_t beta = operand(x).type == OperandType::TENSOR_FLOAT16 ? builder_.addFloat16(1.0f)
                                                                             : builder_.addFloat32(1.0f);
        return emit(op, OperationType::LOG_SOFTMAX, {x}, {beta, builder_.addInt32(-1)}, y);
      }
      case B::L2_NORMALIZATION: {
        SABLE_TRY(expectCounts(op, 1, 1, 1));
        if (const auto* o = op.op.builtin_options_as_L2NormOptions();
            o != nullptr && o->fused_activation_function() != fb::ActivationFunctionType::NONE)
          return importError("operator {} (L2_NORMALIZATION): a fused activation (NNAPI has none here)", op.index);
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        return emit(op, OperationType::L2_NORMALIZATION, {x}, {}, y);  // over the last axis, as TFLite
      }
      case B::LEAKY_RELU: {
        // NNAPI has no LEAKY_RELU: PRELU with a one-element alpha of the input's type, as the
        // delegate does (quantized: the value 1 with scale alpha, so alpha must be > 0).
        SABLE_TRY(expectCounts(op, 1, 1, 1));
        SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::LeakyReluOptions>(op));
        const float alpha = o->alpha();
        if (!std::isfinite(alpha)) return importError("operator {} (LEAKY_RELU): alpha {}", op.index, alpha);
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        const OperandType type = operand(x).type;
        uint32_t a = 0;
        if (type == OperandType::TENSOR_FLOAT32) {
          a = builder_.addConstant<float>(type, {1}, {alpha});
        } else if (type == OperandType::TENSOR_QUANT8_ASYMM || type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED) {
          if (!(alpha > 0.0f))
            return importError("operator {} (LEAKY_RELU): alpha {} (a quantized alpha must be > 0)", op.index, alpha);
          a = builder_.addConstant<uint8_t>(type, {1}, {1}, alpha, 0);
        } else {
          return importError("operator {} (LEAKY_RELU): input is {} (float32 or 8-bit quantized)", op.index,
                             hal::toString(type));
        }
        return emit(op, OperationType::PRELU, {x, a}, {}, y);
      }
      case B::QUANTIZE: {
        SABLE_TRY(expectCounts(op, 1, 1, 1));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        const hal::Operand source = operand(x);
        if (source.type == OperandType::TENSOR_FLOAT32 || source.type == OperandType::TENSOR_FLOAT16)
          return emit(op, OperationType::QUANTIZE, {x}, {}, y);
        // Requantization (e.g. uint8 → int8): NNAPI's QUANTIZE reads only float, so the delegate
        // dequantizes first; the float path is exact for these 8-bit values (docs/tflite.md).
        const uint32_t real = builder_.addTemporary(OperandType::TENSOR_FLOAT32, source.dimensions);
        builder_.addOperation(OperationType::DEQUANTIZE, {x}, {real});
        return emit(op, OperationType::QUANTIZE, {real}, {}, y);
      }
      case B::DEQUANTIZE: {
        SABLE_TRY(expectCounts(op, 1, 1, 1));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        return emit(op, OperationType::DEQUANTIZE, {x}, {}, y);
      }
      case B::RESIZE_BILINEAR:
      case B::RESIZE_NEAREST_NEIGHBOR: {
        SABLE_TRY(expectCounts(op, 1, 2, 1));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        bool alignCorners = false, halfPixel = false;
        if (code == B::RESIZE_BILINEAR) {
          if (const auto* o = op.op.builtin_options_as_ResizeBilinearOptions()) {
            alignCorners = o->align_corners();
            halfPixel = o->half_pixel_centers();
          }
        } else if (const auto* o = op.op.builtin_options_as_ResizeNearestNeighborOptions()) {
          alignCorners = o->align_corners();
          halfPixel = o->half_pixel_centers();
        }
        const std::vector<uint32_t> dims = operand(y).dimensions;  // a copy: adding operands reallocates
        if (dims.size() != 4) return importError("operator {} ({}): output is not 4-D", op.index, op.name);
        // NNAPI takes the output width, then the height (NHWC: dims 2 and 1).
        std::vector<uint32_t> scalars = {builder_.addInt32(static_cast<int32_t>(dims[2])),
                                         builder_.addInt32(static_cast<int32_t>(dims[1]))};
        if (alignCorners || halfPixel || code == B::RESIZE_NEAREST_NEIGHBOR) {
          scalars.push_back(builder_.addBool(false));  // NHWC (and required before the two flags)
          scalars.push_back(builder_.addBool(alignCorners));
          scalars.push_back(builder_.addBool(halfPixel));
        }
        return emit(op, code == B::RESIZE_BILINEAR ? OperationType::RESIZE_BILINEAR
                                                   : OperationType::RESIZE_NEAREST_NEIGHBOR,
                    {x}, scalars, y);
      }
      case B::TRANSPOSE: {
        SABLE_TRY(expectCounts(op, 2, 2, 1));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(auto perm, constantInts(op.inputs[1], fmt::format("operator {} permutation", op.index)));
        const auto rank = static_cast<int64_t>(operand(x).dimensions.size());
        if (static_cast<int64_t>(perm.size()) != rank)
          return importError("operator {} (TRANSPOSE): permutation of {} for rank {}", op.index, perm.size(), rank);
        std::vector<int32_t> values;
        for (int64_t p : perm) {
          if (p < 0 || p >= rank) return importError("operator {} (TRANSPOSE): permutation entry {}", op.index, p);
          values.push_back(static_cast<int32_t>(p));
        }
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        return emit(op, OperationType::TRANSPOSE, {x}, {int32Tensor(values)}, y);
      }
      case B::ARG_MAX:
      case B::ARG_MIN: {
        SABLE_TRY(expectCounts(op, 2, 2, 1));
        fb::TensorType outputType = fb::TensorType::INT64;  // the format's default
        if (code == B::ARG_MAX) {
          if (const auto* o = op.op.builtin_options_as_ArgMaxOptions()) outputType = o->output_type();
        } else if (const auto* o = op.op.builtin_options_as_ArgMinOptions()) {
          outputType = o->output_type();
        }
        if (outputType != fb::TensorType::INT32 && outputType != fb::TensorType::INT64)
          return importError("operator {} ({}): output type {} (int32 or int64)", op.index, op.name,
                             static_cast<int>(outputType));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(auto axis, constantInts(op.inputs[1], fmt::format("operator {} axis", op.index)));
        const auto rank = static_cast<int64_t>(operand(x).dimensions.size());
        if (axis.size() != 1)
          return importError("operator {} ({}): {} axis values (exactly one)", op.index, op.name, axis.size());
        if (axis[0] < -rank || axis[0] >= rank)
          return importError("operator {} ({}): axis {} outside rank {}", op.index, op.name, axis[0], rank);
        const auto a = static_cast<uint32_t>(axis[0] < 0 ? axis[0] + rank : axis[0]);
        // The output is the input's shape without the axis (a rank-1 input gives one element).
        std::vector<uint32_t> expected = operand(x).dimensions;
        expected.erase(expected.begin() + a);
        if (expected.empty()) expected.push_back(1);
        SABLE_ASSIGN_OR_RETURN(uint32_t y, indexOutput(op.outputs[0], fmt::format("operator {} ({}) output", op.index, op.name)));
        if (operand(y).dimensions != expected)
          return importError("operator {} ({}): output shape {} for input {} reduced on axis {}", op.index, op.name,
                             fmt::join(operand(y).dimensions, "x"), fmt::join(operand(x).dimensions, "x"), a);
        return emit(op, code == B::ARG_MAX ? OperationType::ARGMAX : OperationType::ARGMIN, {x},
                    {builder_.addInt32(static_cast<int32_t>(a))}, y);
      }
      case B::UNIDIRECTIONAL_SEQUENCE_LSTM: return mapSequenceLstm(op);
      case B::BIDIRECTIONAL_SEQUENCE_LSTM: return mapBidirectionalLstm(op);
      case B::RNN:
      case B::UNIDIRECTIONAL_SEQUENCE_RNN:
      case B::BIDIRECTIONAL_SEQUENCE_RNN: return mapRnn(op, code);
      case B::ABS:
      case B::NEG:
      case B::SQRT:
      case B::RSQRT:
      case B::EXP:
      case B::LOG:
      case B::LOGICAL_NOT:
      case B::CAST:
      case B::MAXIMUM:
      case B::MINIMUM:
      case B::LESS:
      case B::LESS_EQUAL:
      case B::GREATER:
      case B::GREATER_EQUAL:
      case B::EQUAL:
      case B::NOT_EQUAL:
      case B::LOGICAL_AND:
      case B::LOGICAL_OR:
      case B::PRELU:
      case B::SELECT:
      case B::SELECT_V2: {
        // Element-wise: the same tensors, no options read (the operators' options tables are
        // empty or, for CAST, restate the tensors' types). Types and broadcast shapes are
        // checked by hal::validateModel and at preparation, as for any NNAPI model.
        using O = OperationType;
        const auto [type, inputs] = [&]() -> std::pair<O, size_t> {
          switch (code) {
            case B::ABS: return {O::ABS, 1};
            case B::NEG: return {O::NEG, 1};
            case B::SQRT: return {O::SQRT, 1};
            case B::RSQRT: return {O::RSQRT, 1};
            case B::EXP: return {O::EXP, 1};
            case B::LOG: return {O::LOG, 1};
            case B::LOGICAL_NOT: return {O::LOGICAL_NOT, 1};
            case B::CAST: return {O::CAST, 1};
            case B::MAXIMUM: return {O::MAXIMUM, 2};
            case B::MINIMUM: return {O::MINIMUM, 2};
            case B::LESS: return {O::LESS, 2};
            case B::LESS_EQUAL: return {O::LESS_EQUAL, 2};
            case B::GREATER: return {O::GREATER, 2};
            case B::GREATER_EQUAL: return {O::GREATER_EQUAL, 2};
            case B::EQUAL: return {O::EQUAL, 2};
            case B::NOT_EQUAL: return {O::NOT_EQUAL, 2};
            case B::LOGICAL_AND: return {O::LOGICAL_AND, 2};
            case B::LOGICAL_OR: return {O::LOGICAL_OR, 2};
            case B::PRELU: return {O::PRELU, 2};
            default: return {O::SELECT, 3};  // SELECT, SELECT_V2 (NNAPI's SELECT broadcasts)
          }
        }();
        SABLE_TRY(expectCounts(op, inputs, inputs, 1));
        std::vector<uint32_t> operands;
        for (size_t i = 0; i < inputs; ++i) {
          SABLE_ASSIGN_OR_RETURN(uint32_t x, in(i));
          operands.push_back(x);
        }
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        if (type == O::SELECT && operand(operands[0]).type != OperandType::TENSOR_BOOL8)
          return importError("operator {} ({}): the condition is {}, not BOOL", op.index, op.name,
                             hal::toString(operand(operands[0]).type));
        return emit(op, type, operands, {}, y);
      }
      case B::DIV: {
        SABLE_TRY(expectCounts(op, 2, 2, 1));
        fb::ActivationFunctionType activation = fb::ActivationFunctionType::NONE;
        if (const auto* o = op.op.builtin_options_as_DivOptions()) activation = o->fused_activation_function();
        SABLE_ASSIGN_OR_RETURN(uint32_t a, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t b, in(1));
        SABLE_ASSIGN_OR_RETURN(int32_t fuse, fuseCode(op, activation));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        return emit(op, OperationType::DIV, {a, b}, {builder_.addInt32(fuse)}, y);
      }
      // ---- com.sable.tflite (hal/extensions.h): TFLite operators NNAPI has no operation for ----
      case B::GATHER_ND: {
        SABLE_TRY(expectCounts(op, 2, 2, 1));
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t indices, int32Indices(op, 1));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        const std::vector<uint32_t> params = operand(x).dimensions;
        const std::vector<uint32_t> index = operand(indices).dimensions;
        // A rank-0 tensor is [1] here: TFLite's indices and params have rank >= 1 anyway.
        if (tfliteRank(op.inputs[0]) == 0 || tfliteRank(op.inputs[1]) == 0)
          return importError("operator {} (GATHER_ND): params and indices must have rank at least 1", op.index);
        const uint32_t depth = index.back();
        if (depth > params.size())
          return importError("operator {} (GATHER_ND): indices address {} dimensions, params has {}", op.index, depth,
                             params.size());
        std::vector<uint32_t> expected(index.begin(), index.end() - 1);
        expected.insert(expected.end(), params.begin() + depth, params.end());
        if (expected.empty()) expected.push_back(1);
        SABLE_TRY(expectShape(op, y, expected));
        SABLE_TRY(expectSameQuantization(op, y, x));
        return emit(op, builder_.sableOperation(hal::SableOperation::GATHER_ND), {x, indices}, {}, y);
      }
      case B::FLOOR_DIV:
      case B::FLOOR_MOD: {
        SABLE_TRY(expectCounts(op, 2, 2, 1));
        SABLE_ASSIGN_OR_RETURN(uint32_t a, in(0));
        SABLE_ASSIGN_OR_RETURN(uint32_t b, in(1));
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        const OperandType type = operand(a).type;
        if ((type != OperandType::TENSOR_FLOAT32 && type != OperandType::TENSOR_INT32) || operand(b).type != type ||
            operand(y).type != type)
          return importError("operator {} ({}): inputs and output must all be float32 or all int32, are {}, {} and {}",
                             op.index, op.name, hal::toString(type), hal::toString(operand(b).type),
                             hal::toString(operand(y).type));
        // NumPy broadcasting, as TFLite's.
        const std::vector<uint32_t> da = operand(a).dimensions, db = operand(b).dimensions;
        const size_t rank = std::max(da.size(), db.size());
        std::vector<uint32_t> expected(rank);
        for (size_t i = 0; i < rank; ++i) {
          const uint32_t ea = i + da.size() < rank ? 1 : da[i + da.size() - rank];
          const uint32_t eb = i + db.size() < rank ? 1 : db[i + db.size() - rank];
          if (ea != eb && ea != 1 && eb != 1)
            return importError("operator {} ({}): shapes {} and {} do not broadcast", op.index, op.name, da, db);
          expected[i] = ea == 1 ? eb : ea;
        }
        SABLE_TRY(expectShape(op, y, expected));
        const auto extension = code == B::FLOOR_DIV ? hal::SableOperation::FLOOR_DIV : hal::SableOperation::FLOOR_MOD;
        return emit(op, builder_.sableOperation(extension), {a, b}, {}, y);
      }
      case B::PACK: {
        SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::PackOptions>(op));
        if (op.inputs.empty() || o->values_count() != static_cast<int32_t>(op.inputs.size()))
          return importError("operator {} (PACK): values_count {} with {} inputs", op.index, o->values_count(),
                             op.inputs.size());
        SABLE_TRY(expectCounts(op, 1, 1024, 1));
        std::vector<uint32_t> values;
        for (size_t i = 0; i < op.inputs.size(); ++i) {
          SABLE_ASSIGN_OR_RETURN(uint32_t v, in(i));
          values.push_back(v);
        }
        SABLE_ASSIGN_OR_RETURN(uint32_t y, out());
        const hal::Operand& first = operand(values[0]);
        for (size_t i = 1; i < values.size(); ++i) {
          if (operand(values[i]).type != first.type || operand(values[i]).dimensions != first.dimensions)
            return importError("operator {} (PACK): input {} is {} {}, input 0 is {} {}", op.index, i,
                               hal::toString(operand(values[i]).type), operand(values[i]).dimensions,
                               hal::toString(first.type), first.dimensions);
        }
        for (uint32_t v : values) SABLE_TRY(expectSameQuantization(op, y, v));
        // TFLite's values have rank R (0 for scalars); the axis is in [-(R + 1), R].
        const auto rank = static_cast<int32_t>(tfliteRank(op.inputs[0]));
        int32_t axis = o->axis();
        if (axis < -(rank + 1) || axis > rank)
          return importError("operator {} (PACK): axis {} outside [{}, {}] for values of rank {}", op.index, axis,
                             -(rank + 1), rank, rank);
        if (axis < 0) axis += rank + 1;
        const auto count = static_cast<uint32_t>(values.size());
        if (rank == 0) {
          // Scalars are [1] operands here: PACK on axis 0 makes [count, 1], UNPACK of its axis 1
          // (one output) the vector [count]. (NNAPI's CONCATENATION would do for float and 8-bit
          // values, not for int32.)
          SABLE_TRY(expectShape(op, y, {count}));
          const hal::Operand& v = operand(values[0]);
          const uint32_t stacked = builder_.addTemporary(v.type, {count, 1}, v.scale, v.zeroPoint);
          builder_.addOperation(builder_.sableOperation(hal::SableOperation::PACK),
                                [&] {
                                  std::vector<uint32_t> inputs = values;
                                  inputs.push_back(builder_.addInt32(0));
                                  return inputs;
                                }(),
                                {stacked});
          builder_.addOperation(builder_.sableOperation(hal::SableOperation::UNPACK), {stacked, builder_.addInt32(1)}, {y});
          return {};
        }
        std::vector<uint32_t> expected = first.dimensions;
        expected.insert(expected.begin() + axis, count);
        SABLE_TRY(expectShape(op, y, expected));
        return emit(op, builder_.sableOperation(hal::SableOperation::PACK), values, {builder_.addInt32(axis)}, y);
      }
      case B::UNPACK: {
        SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::UnpackOptions>(op));
        if (op.inputs.size() != 1) return importError("operator {} (UNPACK): {} inputs (expected 1)", op.index, op.inputs.size());
        SABLE_ASSIGN_OR_RETURN(uint32_t x, in(0));
        const std::vector<uint32_t> dims = operand(x).dimensions;
        const auto rank = static_cast<int32_t>(tfliteRank(op.inputs[0]));
        int32_t axis = o->axis();
        if (rank == 0 || axis < -rank || axis >= rank)
          return importError("operator {} (UNPACK): axis {} outside [{}, {}) for an input of rank {}", op.index, axis,
                             -rank, rank, rank);
        if (axis < 0) axis += rank;
        if (o->num() != static_cast<int32_t>(dims[axis]) || op.outputs.size() != dims[axis])
          return importError("operator {} (UNPACK): num {} and {} outputs, but axis {} has {} entries", op.index,
                             o->num(), op.outputs.size(), axis, dims[axis]);
        std::vector<uint32_t> expected = dims;
        expected.erase(expected.begin() + axis);
        if (expected.empty()) expected.push_back(1);
        std::vector<uint32_t> outs;
        for (size_t k = 0; k < op.outputs.size(); ++k) {
          SABLE_ASSIGN_OR_RETURN(uint32_t y, output(op.outputs[k], fmt::format("operator {} (UNPACK) output {}", op.index, k)));
          SABLE_TRY(expectShape(op, y, expected));
          SABLE_TRY(expectSameQuantization(op, y, x));
          outs.push_back(y);
        }
        builder_.addOperation(builder_.sableOperation(hal::SableOperation::UNPACK), {x, builder_.addInt32(axis)}, outs);
        return {};
      }
      default:
        return importError("operator {}: builtin operator {} is not supported", op.index, op.name);
    }
  }

  // The float operands of a recurrent operator's inputs: each through floatInput (constants
  // dequantized, so hybrid int8 weights run in float; variable state tensors zeros), an omitted
  // one (index −1) as NNAPI's omitted operand.
  hal::Result<std::vector<uint32_t>> floatInputs(const Op& op, const std::string& name) {
    std::vector<uint32_t> inputs;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (op.inputs[i] < 0) {
        inputs.push_back(builder_.addOmitted(OperandType::TENSOR_FLOAT32));
        continue;
      }
      SABLE_ASSIGN_OR_RETURN(uint32_t x, floatInput(op.inputs[i], fmt::format("{} input {}", name, i)));
      inputs.push_back(x);
    }
    return inputs;
  }

  // Input i of a recurrent operator (when present) must have shape `dims`.
  hal::Result<void> expectInputShape(const Op& op, const std::vector<uint32_t>& inputs, size_t i,
                                     const std::vector<uint32_t>& dims, std::string_view what,
                                     const std::string& name) {
    if (i >= inputs.size() || op.inputs[i] < 0) return {};
    if (operand(inputs[i]).dimensions != dims)
      return importError("{}: {} (input {}) is {}, expected {}", name, what, i,
                         fmt::join(operand(inputs[i]).dimensions, "x"), fmt::join(dims, "x"));
    return {};
  }

  // A sequence input [batch, time, features] (time major: [time, batch, features]).
  struct SequenceShape {
    uint32_t batches = 0, time = 0, features = 0;
  };
  hal::Result<SequenceShape> sequenceShape(uint32_t input, bool timeMajor, const std::string& name) {
    const std::vector<uint32_t> d = operand(input).dimensions;
    if (d.size() != 3) return importError("{}: input is rank {} (3)", name, d.size());
    return SequenceShape{timeMajor ? d[1] : d[0], timeMajor ? d[0] : d[1], d[2]};
  }

  // The output tensor `index` of a sequence operator, [batch, time, size] (time major: [time,
  // batch, size]), as a float32 operand.
  hal::Result<uint32_t> sequenceOutput(int32_t index, const SequenceShape& in, uint32_t size, bool timeMajor,
                                       const std::string& what) {
    SABLE_ASSIGN_OR_RETURN(const fb::Tensor* tensor, tensorAt(index, what));
    SABLE_ASSIGN_OR_RETURN(Shape shape, operandShape(index, *tensor));
    const std::vector<uint32_t> expected = timeMajor ? std::vector<uint32_t>{in.time, in.batches, size}
                                                     : std::vector<uint32_t>{in.batches, in.time, size};
    if (shape.dims != expected)
      return importError("{} is {}, expected {}", what, fmt::join(shape.dims, "x"), fmt::join(expected, "x"));
    SABLE_ASSIGN_OR_RETURN(uint32_t y, output(index, what));
    if (operand(y).type != OperandType::TENSOR_FLOAT32)
      return importError("{} is {} (float32)", what, hal::toString(operand(y).type));
    return y;
  }

  // One direction of an LSTM in TFLite's (and NNAPI's) input order: the 17 tensors from `first`
  // (input-to-gate weights i, f, c, o; recurrent weights; 3 peepholes; 4 gate biases; projection
  // weights and bias), its output and cell states, and (−1 for none) 4 layer normalization
  // weights. Checks what is required and every shape; returns {units, output size}.
  hal::Result<std::pair<uint32_t, uint32_t>> lstmDirection(const Op& op, const std::vector<uint32_t>& inputs,
                                                           size_t first, size_t outputState, size_t cellState,
                                                           int layerNorm, const SequenceShape& in,
                                                           const std::string& name) {
    // Required: the forget/cell/output gates' weights and biases, both states.
    for (size_t i : {first + 1, first + 2, first + 3, first + 5, first + 6, first + 7, first + 12, first + 13,
                     first + 14, outputState, cellState})
      if (op.inputs[i] < 0) return importError("{}: input {} is required but omitted", name, i);
    const std::vector<uint32_t> w = operand(inputs[first + 3]).dimensions;
    const std::vector<uint32_t> r = operand(inputs[first + 7]).dimensions;
    if (w.size() != 2 || r.size() != 2)
      return importError("{}: input-to-output and recurrent-to-output weights (inputs {}, {}) must be 2-D", name,
                         first + 3, first + 7);
    const uint32_t units = w[0], outputs = r[1];
    for (size_t g = 0; g < 4; ++g) {
      SABLE_TRY(expectInputShape(op, inputs, first + g, {units, in.features}, "input weights", name));
      SABLE_TRY(expectInputShape(op, inputs, first + 4 + g, {units, outputs}, "recurrent weights", name));
      SABLE_TRY(expectInputShape(op, inputs, first + 11 + g, {units}, "gate bias", name));
      if (layerNorm >= 0)
        SABLE_TRY(expectInputShape(op, inputs, layerNorm + g, {units}, "layer normalization weights", name));
    }
    for (size_t k = 0; k < 3; ++k) SABLE_TRY(expectInputShape(op, inputs, first + 8 + k, {units}, "peephole weights", name));
    SABLE_TRY(expectInputShape(op, inputs, first + 15, {outputs, units}, "projection weights", name));
    SABLE_TRY(expectInputShape(op, inputs, first + 16, {outputs}, "projection bias", name));
    SABLE_TRY(expectInputShape(op, inputs, outputState, {in.batches, outputs}, "output state", name));
    SABLE_TRY(expectInputShape(op, inputs, cellState, {in.batches, units}, "cell state", name));
    if (op.inputs[first + 15] < 0 && outputs != units)
      return importError("{}: without projection the output size {} must equal the units {}", name, outputs, units);
    return std::pair{units, outputs};
  }

  // The NNAPI activation code of a TFLite LSTM (NONE, RELU, RELU6, TANH).
  hal::Result<int32_t> lstmActivation(fb::ActivationFunctionType activation, const std::string& name) {
    switch (activation) {
      case fb::ActivationFunctionType::NONE: return 0;
      case fb::ActivationFunctionType::RELU: return 1;
      case fb::ActivationFunctionType::RELU6: return 3;
      case fb::ActivationFunctionType::TANH: return 4;
      default: return importError("{}: activation {} (NONE, RELU, RELU6 or TANH)", name, static_cast<int>(activation));
    }
  }

  hal::Result<void> checkClips(float cellClip, float projClip, const std::string& name) {
    if (!std::isfinite(cellClip) || cellClip < 0 || !std::isfinite(projClip) || projClip < 0)
      return importError("{}: cell clip {} and projection clip {} must be finite and >= 0", name, cellClip, projClip);
    return {};
  }

  // UNIDIRECTIONAL_SEQUENCE_LSTM → NNAPI's (float) UNIDIRECTIONAL_SEQUENCE_LSTM: the same 20
  // tensors in the same order, then activation, cell clip, projection clip, time major and the 4
  // layer normalization weights. NNAPI has no integer sequence LSTM, and its single-step
  // QUANTIZED_LSTM adds the gate biases only under layer normalization (TFLite's integer kernel
  // always does), so a quantized or hybrid LSTM runs in float on dequantized tensors: the input
  // through DEQUANTIZE, the output through QUANTIZE to the output tensor's quantization; the
  // `intermediates` (the integer kernel's internal scales) are not used.
  hal::Result<void> mapSequenceLstm(const Op& op) {
    const std::string name = fmt::format("operator {} ({})", op.index, op.name);
    if (op.inputs.size() != 20 && op.inputs.size() != 24)
      return importError("{}: {} inputs (expected 20, or 24 with layer normalization)", name, op.inputs.size());
    if (op.outputs.size() != 1) return importError("{}: {} outputs (expected 1)", name, op.outputs.size());
    SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::UnidirectionalSequenceLSTMOptions>(op));
    SABLE_ASSIGN_OR_RETURN(int32_t activation, lstmActivation(o->fused_activation_function(), name));
    SABLE_TRY(checkClips(o->cell_clip(), o->proj_clip(), name));
    if (o->diagonal_recurrent_tensors()) return importError("{}: diagonal recurrent weights are not supported", name);
    if (op.inputs[0] < 0) return importError("{}: input 0 is required but omitted", name);
    SABLE_ASSIGN_OR_RETURN(std::vector<uint32_t> inputs, floatInputs(op, name));
    const bool timeMajor = o->time_major();
    SABLE_ASSIGN_OR_RETURN(SequenceShape in, sequenceShape(inputs[0], timeMajor, name));
    SABLE_ASSIGN_OR_RETURN(auto sizes, lstmDirection(op, inputs, 1, 18, 19, op.inputs.size() == 24 ? 20 : -1, in, name));
    const uint32_t outputs = sizes.second;

    SABLE_ASSIGN_OR_RETURN(const fb::Tensor* outTensor, tensorAt(op.outputs[0], name + " output"));
    SABLE_ASSIGN_OR_RETURN(Shape outShape, operandShape(op.outputs[0], *outTensor));
    const std::vector<uint32_t> expected = timeMajor ? std::vector<uint32_t>{in.time, in.batches, outputs}
                                                     : std::vector<uint32_t>{in.batches, in.time, outputs};
    if (outShape.dims != expected)
      return importError("{}: output is {}, expected {}", name, fmt::join(outShape.dims, "x"), fmt::join(expected, "x"));
    SABLE_ASSIGN_OR_RETURN(uint32_t y, output(op.outputs[0], name + " output"));
    const OperandType outType = operand(y).type;
    if (outType != OperandType::TENSOR_FLOAT32 && outType != OperandType::TENSOR_QUANT8_ASYMM &&
        outType != OperandType::TENSOR_QUANT8_ASYMM_SIGNED)
      return importError("{}: output is {} (float32 or 8-bit quantized)", name, hal::toString(outType));

    SABLE_ASSIGN_OR_RETURN(float hiddenOffset, integerLstmHiddenOffset(op, outShape, name));
    if (hiddenOffset != 0.0f) {
      // The recurrence reads h + δ: W_h·δ joins each gate's bias, and the hidden state starts at
      // −δ so that the first step reads 0, as TFLite's does.
      for (size_t g = 0; g < 4; ++g) {
        if (op.inputs[12 + g] < 0 || op.inputs[5 + g] < 0) continue;
        SABLE_ASSIGN_OR_RETURN(auto recurrent, realConstant(op.inputs[5 + g], name + " recurrent weights"));
        SABLE_ASSIGN_OR_RETURN(auto bias, realConstant(op.inputs[12 + g], name + " gate bias"));
        for (uint32_t u = 0; u < sizes.first; ++u) {
          double sum = 0;
          for (uint32_t k = 0; k < outputs; ++k) sum += recurrent.second[u * outputs + k];
          bias.second[u] = static_cast<float>(bias.second[u] + sum * hiddenOffset);
        }
        inputs[12 + g] = builder_.addConstant<float>(OperandType::TENSOR_FLOAT32, bias.first, bias.second);
      }
      inputs[18] = builder_.addConstant<float>(OperandType::TENSOR_FLOAT32, {in.batches, outputs},
                                               std::vector<float>(size_t{in.batches} * outputs, -hiddenOffset));
    }
    std::vector<uint32_t> all(inputs.begin(), inputs.begin() + 20);
    all.push_back(builder_.addInt32(activation));
    all.push_back(builder_.addFloat32(o->cell_clip()));
    all.push_back(builder_.addFloat32(o->proj_clip()));
    all.push_back(builder_.addBool(timeMajor));
    for (size_t i = 20; i < 24; ++i)
      all.push_back(i < inputs.size() ? inputs[i] : builder_.addOmitted(OperandType::TENSOR_FLOAT32));
    if (outType == OperandType::TENSOR_FLOAT32) {
      builder_.addOperation(OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM, std::move(all), {y});
      return {};
    }
    uint32_t real = builder_.addTemporary(OperandType::TENSOR_FLOAT32, expected);
    builder_.addOperation(OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM, std::move(all), {real});
    if (hiddenOffset != 0.0f) {  // the output is h + δ
      const uint32_t shifted = builder_.addTemporary(OperandType::TENSOR_FLOAT32, expected);
      builder_.addOperation(OperationType::ADD,
                            {real, builder_.addConstant<float>(OperandType::TENSOR_FLOAT32, {1}, {hiddenOffset}),
                             builder_.addInt32(0)},
                            {shifted});
      real = shifted;
    }
    builder_.addOperation(OperationType::QUANTIZE, {real}, {y});
    return {};
  }

  // TFLite's integer LSTM kernel (8-bit input and weights, lstm_eval.cc, 8x8→16) writes each hidden
  // value as q = round(h / s) − zp, with s and zp the quantization of intermediate tensor 4
  // (`CwiseMul`'s `value -= output_zp`), where the output tensor's quantization reads q as
  // s·(q − zp_out): what it outputs and feeds back is h + δ, δ = −(zp + zp_out)·s, rather than h
  // (o·tanh(c)). Returns δ for such an LSTM (0 for any other: float or hybrid inputs, no
  // intermediates, zero points that cancel); mapSequenceLstm reproduces it on the float LSTM. Only
  // the form the converter writes without projection is taken: intermediate 4 quantized as the
  // output and the output state (the same scale and zero point); another is refused.
  hal::Result<float> integerLstmHiddenOffset(const Op& op, const Shape& outShape, const std::string& name) {
    SABLE_ASSIGN_OR_RETURN(const fb::Tensor* input, tensorAt(op.inputs[0], name + " input"));
    const auto* intermediates = op.op.intermediates();
    if (input->type() != fb::TensorType::INT8 || outShape.type != OperandType::TENSOR_QUANT8_ASYMM_SIGNED ||
        intermediates == nullptr || intermediates->size() != 5)
      return 0.0f;
    // One scale and one zero point of tensor `index` (the intermediate and the state have no data).
    auto quantization = [&](int32_t index, const std::string& what) -> hal::Result<std::pair<float, int64_t>> {
      SABLE_ASSIGN_OR_RETURN(const fb::Tensor* tensor, tensorAt(index, what));
      const fb::QuantizationParameters* q = tensor->quantization();
      if (q == nullptr || q->scale() == nullptr || q->zero_point() == nullptr || q->scale()->size() != 1 ||
          q->zero_point()->size() != 1)
        return importError("{} (tensor {}) needs one scale and one zero point", what, index);
      return std::pair{q->scale()->Get(0), q->zero_point()->Get(0)};
    };
    SABLE_ASSIGN_OR_RETURN(auto hidden, quantization(intermediates->Get(4), name + ": intermediate 4 (the hidden state)"));
    SABLE_ASSIGN_OR_RETURN(auto state, quantization(op.inputs[18], name + ": the output state"));
    if (op.inputs[16] >= 0 || hidden.first != outShape.scale || hidden.second != outShape.zeroPoint ||
        state.first != outShape.scale || state.second != outShape.zeroPoint)
      return importError("{}: an integer LSTM whose hidden state (intermediate 4: scale {}, zero point {}), output "
                         "(scale {}, zero point {}) and output state (scale {}, zero point {}) are not quantized "
                         "alike, or with projection, is not supported",
                         name, hidden.first, hidden.second, outShape.scale, outShape.zeroPoint, state.first,
                         state.second);
    return static_cast<float>(-2.0 * static_cast<double>(hidden.second) * hidden.first);
  }

  // BIDIRECTIONAL_SEQUENCE_LSTM → NNAPI's (float) BIDIRECTIONAL_SEQUENCE_LSTM: TFLite's 48 inputs
  // are NNAPI's first 48 (input; forward 1-17; backward 18-34; the four states; auxiliary input
  // and weights, passed as they are: NNAPI gives them TFLite's meaning), then activation, cell
  // clip, projection clip, merge outputs, time major and 8 omitted layer normalization weights
  // (TFLite's operator has none), as the delegate maps it. Tensors in float as for the
  // unidirectional LSTM; the outputs must be float32 (TFLite's kernel writes float).
  hal::Result<void> mapBidirectionalLstm(const Op& op) {
    const std::string name = fmt::format("operator {} ({})", op.index, op.name);
    if (op.inputs.size() != 48) return importError("{}: {} inputs (expected 48)", name, op.inputs.size());
    SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::BidirectionalSequenceLSTMOptions>(op));
    const bool merge = o->merge_outputs(), timeMajor = o->time_major();
    if (op.outputs.size() != (merge ? 1u : 2u))
      return importError("{}: {} outputs (expected {} with merge_outputs {})", name, op.outputs.size(), merge ? 1 : 2,
                         merge);
    SABLE_ASSIGN_OR_RETURN(int32_t activation, lstmActivation(o->fused_activation_function(), name));
    SABLE_TRY(checkClips(o->cell_clip(), o->proj_clip(), name));
    if (op.inputs[0] < 0) return importError("{}: input 0 is required but omitted", name);
    SABLE_ASSIGN_OR_RETURN(std::vector<uint32_t> inputs, floatInputs(op, name));
    SABLE_ASSIGN_OR_RETURN(SequenceShape in, sequenceShape(inputs[0], timeMajor, name));
    SABLE_ASSIGN_OR_RETURN(auto fw, lstmDirection(op, inputs, 1, 35, 36, -1, in, name));
    // The backward direction reads the auxiliary input instead when it is given without
    // auxiliary weights (parallel linking).
    SequenceShape bwIn = in;
    if (op.inputs[39] >= 0 && op.inputs[40] < 0) {
      SABLE_ASSIGN_OR_RETURN(bwIn, sequenceShape(inputs[39], timeMajor, name + " auxiliary input"));
      if (bwIn.batches != in.batches || bwIn.time != in.time)
        return importError("{}: the auxiliary input's batch and time differ from the input's", name);
    }
    SABLE_ASSIGN_OR_RETURN(auto bw, lstmDirection(op, inputs, 18, 37, 38, -1, bwIn, name));
    std::vector<uint32_t> outs;
    if (merge) {
      SABLE_ASSIGN_OR_RETURN(uint32_t y, sequenceOutput(op.outputs[0], in, fw.second + bw.second, timeMajor,
                                                        name + " output"));
      outs.push_back(y);
    } else {
      SABLE_ASSIGN_OR_RETURN(uint32_t y0, sequenceOutput(op.outputs[0], in, fw.second, timeMajor, name + " output 0"));
      SABLE_ASSIGN_OR_RETURN(uint32_t y1, sequenceOutput(op.outputs[1], in, bw.second, timeMajor, name + " output 1"));
      outs = {y0, y1};
    }
    inputs.push_back(builder_.addInt32(activation));
    inputs.push_back(builder_.addFloat32(o->cell_clip()));
    inputs.push_back(builder_.addFloat32(o->proj_clip()));
    inputs.push_back(builder_.addBool(merge));
    inputs.push_back(builder_.addBool(timeMajor));
    for (int i = 0; i < 8; ++i) inputs.push_back(builder_.addOmitted(OperandType::TENSOR_FLOAT32));
    builder_.addOperation(OperationType::BIDIRECTIONAL_SEQUENCE_LSTM, std::move(inputs), std::move(outs));
    return {};
  }

  // RNN, UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN → NNAPI's operations of the same
  // names (float), TFLite's inputs in the same order (tensors in float as for the LSTM), then the
  // activation (TFLite's and NNAPI's codes agree: NONE 0, RELU 1, RELU_N1_TO_1 2, RELU6 3, TANH 4),
  // time major and merge outputs where the operation has them. NNAPI's RNN also writes the new
  // hidden state (output 0, unused here) before TFLite's output.
  hal::Result<void> mapRnn(const Op& op, fb::BuiltinOperator code) {
    using B = fb::BuiltinOperator;
    const std::string name = fmt::format("operator {} ({})", op.index, op.name);
    fb::ActivationFunctionType activation = fb::ActivationFunctionType::NONE;
    bool timeMajor = false, merge = false;
    if (code == B::RNN) {
      SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::RNNOptions>(op));
      activation = o->fused_activation_function();
      SABLE_TRY(expectCounts(op, 5, 5, 1));
    } else if (code == B::UNIDIRECTIONAL_SEQUENCE_RNN) {
      SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::SequenceRNNOptions>(op));
      activation = o->fused_activation_function();
      timeMajor = o->time_major();
      SABLE_TRY(expectCounts(op, 5, 5, 1));
    } else {
      SABLE_ASSIGN_OR_RETURN(const auto* o, options<fb::BidirectionalSequenceRNNOptions>(op));
      activation = o->fused_activation_function();
      timeMajor = o->time_major();
      merge = o->merge_outputs();
      SABLE_TRY(expectCounts(op, 12, 12, merge ? 1 : 2));
    }
    if (activation == fb::ActivationFunctionType::SIGN_BIT || static_cast<int>(activation) > 5)
      return importError("{}: activation {} (NONE, RELU, RELU_N1_TO_1, RELU6 or TANH)", name,
                         static_cast<int>(activation));
    const int32_t act = static_cast<int32_t>(activation);
    for (size_t i = 0; i < 9 && i < op.inputs.size(); ++i)
      if (op.inputs[i] < 0) return importError("{}: input {} is required but omitted", name, i);
    SABLE_ASSIGN_OR_RETURN(std::vector<uint32_t> inputs, floatInputs(op, name));
    // One direction's weights, recurrent weights, bias and hidden state from input `first`: units
    // from the weights, every shape checked against them.
    auto direction = [&](size_t first, uint32_t batches, uint32_t features) -> hal::Result<uint32_t> {
      const std::vector<uint32_t> w = operand(inputs[first]).dimensions;
      if (w.size() != 2 || w[1] != features)
        return importError("{}: weights (input {}) are {}, expected [units, {}]", name, first, fmt::join(w, "x"),
                           features);
      const uint32_t units = w[0];
      SABLE_TRY(expectInputShape(op, inputs, first + 1, {units, units}, "recurrent weights", name));
      SABLE_TRY(expectInputShape(op, inputs, first + 2, {units}, "bias", name));
      SABLE_TRY(expectInputShape(op, inputs, first + 3, {batches, units}, "hidden state", name));
      return units;
    };
    if (code == B::RNN) {
      const std::vector<uint32_t> d = operand(inputs[0]).dimensions;
      if (d.size() != 2) return importError("{}: input is rank {} (2)", name, d.size());
      SABLE_ASSIGN_OR_RETURN(uint32_t units, direction(1, d[0], d[1]));
      SABLE_ASSIGN_OR_RETURN(uint32_t y, output(op.outputs[0], name + " output"));
      if (operand(y).type != OperandType::TENSOR_FLOAT32 || operand(y).dimensions != std::vector<uint32_t>{d[0], units})
        return importError("{}: output is {} {}, expected float32 {}x{}", name, hal::toString(operand(y).type),
                           fmt::join(operand(y).dimensions, "x"), d[0], units);
      const uint32_t state = builder_.addTemporary(OperandType::TENSOR_FLOAT32, {d[0], units});
      inputs.push_back(builder_.addInt32(act));
      builder_.addOperation(OperationType::RNN, std::move(inputs), {state, y});
      return {};
    }
    SABLE_ASSIGN_OR_RETURN(SequenceShape in, sequenceShape(inputs[0], timeMajor, name));
    SABLE_ASSIGN_OR_RETURN(uint32_t units, direction(1, in.batches, in.features));
    if (code == B::UNIDIRECTIONAL_SEQUENCE_RNN) {
      SABLE_ASSIGN_OR_RETURN(uint32_t y, sequenceOutput(op.outputs[0], in, units, timeMajor, name + " output"));
      inputs.push_back(builder_.addInt32(act));
      inputs.push_back(builder_.addInt32(timeMajor ? 1 : 0));  // NNAPI's time major is an INT32 here
      builder_.addOperation(OperationType::UNIDIRECTIONAL_SEQUENCE_RNN, std::move(inputs), {y});
      return {};
    }
    SequenceShape bwIn = in;  // parallel linking: the auxiliary input without auxiliary weights
    if (op.inputs[9] >= 0 && op.inputs[10] < 0) {
      SABLE_ASSIGN_OR_RETURN(bwIn, sequenceShape(inputs[9], timeMajor, name + " auxiliary input"));
      if (bwIn.batches != in.batches || bwIn.time != in.time)
        return importError("{}: the auxiliary input's batch and time differ from the input's", name);
    }
    SABLE_ASSIGN_OR_RETURN(uint32_t bwUnits, direction(5, in.batches, bwIn.features));
    std::vector<uint32_t> outs;
    if (merge) {
      SABLE_ASSIGN_OR_RETURN(uint32_t y, sequenceOutput(op.outputs[0], in, units + bwUnits, timeMajor, name + " output"));
      outs.push_back(y);
    } else {
      SABLE_ASSIGN_OR_RETURN(uint32_t y0, sequenceOutput(op.outputs[0], in, units, timeMajor, name + " output 0"));
      SABLE_ASSIGN_OR_RETURN(uint32_t y1, sequenceOutput(op.outputs[1], in, bwUnits, timeMajor, name + " output 1"));
      outs = {y0, y1};
    }
    inputs.push_back(builder_.addInt32(act));
    inputs.push_back(builder_.addBool(timeMajor));
    inputs.push_back(builder_.addBool(merge));
    builder_.addOperation(OperationType::BIDIRECTIONAL_SEQUENCE_RNN, std::move(inputs), std::move(outs));
    return {};
  }

  // The custom TFLite_Detection_PostProcess → DETECTION_POSTPROCESSING. TFLite: inputs box
  // encodings [1, anchors, ≥ 4], class predictions [1, anchors, classes + 1] (column 0 the
  // background), anchors [anchors, 4], options in a FlexBuffers map; outputs boxes [1, max, 4],
  // classes [1, max], scores [1, max], count [1], all float32. NNAPI takes (scores, encodings,
  // anchors) in float, writes (scores, boxes, classes, count) with int32 classes and count: those
  // two go through CAST to TFLite's float32. 8-bit inputs are dequantized. Refused where the two
  // differ: scores without a background column, and more than one class per detection (TFLite
  // then reports max × classes rows with a count of anchors, NNAPI max rows in all).
  hal::Result<void> mapDetectionPostProcess(const Op& op) {
    const std::string name = fmt::format("operator {} ({})", op.index, op.name);
    if (op.inputs.size() != 3 || op.outputs.size() != 4)
      return importError("{}: {} inputs and {} outputs (expected 3 and 4)", name, op.inputs.size(), op.outputs.size());
    const auto* raw = op.op.custom_options();
    if (raw == nullptr || raw->size() == 0) return importError("{}: no custom options", name);
    if (!flexbuffers::VerifyBuffer(raw->data(), raw->size()))
      return importError("{}: the custom options are not a valid FlexBuffer", name);
    const flexbuffers::Reference root = flexbuffers::GetRoot(raw->data(), raw->size());
    if (!root.IsMap()) return importError("{}: the custom options are not a FlexBuffers map", name);
    const flexbuffers::Map options = root.AsMap();
    // A number under `key`; absent keys take `fallback` when it is given, else are an error.
    auto number = [&](const char* key, std::optional<double> fallback) -> hal::Result<double> {
      const flexbuffers::Reference v = options[key];
      if (v.IsNull() && fallback) return *fallback;
      if (!v.IsNumeric() && !v.IsBool()) return importError("{}: option '{}' is missing or not a number", name, key);
      const double d = v.IsFloat() ? v.AsDouble() : static_cast<double>(v.AsInt64());
      if (!std::isfinite(d)) return importError("{}: option '{}' is {}", name, key, d);
      return d;
    };
    auto count = [&](const char* key, std::optional<double> fallback) -> hal::Result<int32_t> {
      SABLE_ASSIGN_OR_RETURN(double d, number(key, fallback));
      if (d < 1 || d > kMaxDimension || d != std::floor(d))
        return importError("{}: option '{}' is {} (an integer in 1..{})", name, key, d, kMaxDimension);
      return static_cast<int32_t>(d);
    };
    SABLE_ASSIGN_OR_RETURN(int32_t maxDetections, count("max_detections", std::nullopt));
    SABLE_ASSIGN_OR_RETURN(int32_t classesPerDetection, count("max_classes_per_detection", std::nullopt));
    SABLE_ASSIGN_OR_RETURN(int32_t perClass, count("detections_per_class", 100.0));  // TFLite's default
    SABLE_ASSIGN_OR_RETURN(int32_t numClasses, count("num_classes", std::nullopt));
    SABLE_ASSIGN_OR_RETURN(double regular, number("use_regular_nms", 0.0));
    SABLE_ASSIGN_OR_RETURN(double scoreThreshold, number("nms_score_threshold", std::nullopt));
    SABLE_ASSIGN_OR_RETURN(double iouThreshold, number("nms_iou_threshold", std::nullopt));
    double scales[4];
    const char* scaleKeys[4] = {"y_scale", "x_scale", "h_scale", "w_scale"};
    for (size_t k = 0; k < 4; ++k) {
      SABLE_ASSIGN_OR_RETURN(scales[k], number(scaleKeys[k], std::nullopt));
      if (!(scales[k] > 0)) return importError("{}: option '{}' is {} (> 0)", name, scaleKeys[k], scales[k]);
    }
    if (classesPerDetection != 1)
      return importError("{}: max_classes_per_detection {} (only 1: TFLite then lays out max_detections x classes "
                         "rows, NNAPI max_detections)", name, classesPerDetection);
    if (!(iouThreshold > 0 && iouThreshold <= 1))
      return importError("{}: nms_iou_threshold {} (in (0, 1])", name, iouThreshold);

    SABLE_ASSIGN_OR_RETURN(uint32_t encodings, floatInput(op.inputs[0], name + " box encodings"));
    SABLE_ASSIGN_OR_RETURN(uint32_t scores, floatInput(op.inputs[1], name + " class predictions"));
    SABLE_ASSIGN_OR_RETURN(uint32_t anchors, floatInput(op.inputs[2], name + " anchors"));
    const std::vector<uint32_t> e = operand(encodings).dimensions, c = operand(scores).dimensions,
                                a = operand(anchors).dimensions;
    if (e.size() != 3 || e[0] != 1 || e[2] < 4 || c.size() != 3 || c[0] != 1 || c[1] != e[1] || a.size() != 2 ||
        a[0] != e[1] || a[1] != 4)
      return importError("{}: box encodings {}, class predictions {} and anchors {} (expected [1, anchors, >= 4], "
                         "[1, anchors, classes + 1] and [anchors, 4])", name, fmt::join(e, "x"), fmt::join(c, "x"),
                         fmt::join(a, "x"));
    if (c[2] != static_cast<uint32_t>(numClasses) + 1)
      return importError("{}: {} score columns for num_classes {} (NNAPI needs the background column 0)", name, c[2],
                         numClasses);
    const auto max = static_cast<uint32_t>(maxDetections);
    const std::vector<uint32_t> shapes[4] = {{1, max, 4}, {1, max}, {1, max}, {1}};
    const char* what[4] = {"boxes", "classes", "scores", "count"};
    uint32_t outs[4];
    for (size_t k = 0; k < 4; ++k) {
      SABLE_ASSIGN_OR_RETURN(outs[k], output(op.outputs[k], fmt::format("{} output {} ({})", name, k, what[k])));
      if (operand(outs[k]).type != OperandType::TENSOR_FLOAT32 || operand(outs[k]).dimensions != shapes[k])
        return importError("{}: output {} ({}) is {} {}, expected float32 {}", name, k, what[k],
                           hal::toString(operand(outs[k]).type), fmt::join(operand(outs[k]).dimensions, "x"),
                           fmt::join(shapes[k], "x"));
    }
    const uint32_t classes = builder_.addTemporary(OperandType::TENSOR_INT32, {1, max});
    const uint32_t detections = builder_.addTemporary(OperandType::TENSOR_INT32, {1});
    std::vector<uint32_t> inputs = {scores, encodings, anchors};
    for (double scale : scales) inputs.push_back(builder_.addFloat32(static_cast<float>(scale)));
    inputs.push_back(builder_.addBool(regular != 0));
    inputs.push_back(builder_.addInt32(maxDetections));
    inputs.push_back(builder_.addInt32(classesPerDetection));
    inputs.push_back(builder_.addInt32(perClass));
    inputs.push_back(builder_.addFloat32(static_cast<float>(scoreThreshold)));
    inputs.push_back(builder_.addFloat32(static_cast<float>(iouThreshold)));
    inputs.push_back(builder_.addBool(false));  // TFLite's classes start at 0 after the background
    builder_.addOperation(OperationType::DETECTION_POSTPROCESSING, std::move(inputs),
                          {outs[2], outs[0], classes, detections});
    builder_.addOperation(OperationType::CAST, {classes}, {outs[1]});
    builder_.addOperation(OperationType::CAST, {detections}, {outs[3]});
    return {};
  }

  const fb::Model& model_;
  const fb::SubGraph* graph_ = nullptr;
  const flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>>* tensors_ = nullptr;
  std::vector<std::optional<uint32_t>> operands_;  // tensor index → operand, once made
  ModelBuilder builder_;
};

}  // namespace

hal::Result<hal::Model> importTflite(std::span<const uint8_t> bytes) {
  // Size first: the verifier's offsets are 32-bit, and a file shorter than the root offset and
  // identifier is not worth looking at.
  if (bytes.size() < 8) return importError("the file is {} bytes, too short to be a TFLite model", bytes.size());
  if (bytes.size() > kMaxTfliteFileBytes)
    return importError("the file is {} bytes (at most {} are read)", bytes.size(), kMaxTfliteFileBytes);
  if (!fb::ModelBufferHasIdentifier(bytes.data())) {
    std::string id;
    for (size_t i = 4; i < 8; ++i) {
      const char c = static_cast<char>(bytes[i]);
      id += c >= 0x20 && c < 0x7f ? std::string(1, c) : fmt::format("\\x{:02x}", bytes[i]);
    }
    return importError("file identifier '{}' is not 'TFL3' (not a TFLite model)", id);
  }
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!fb::VerifyModelBuffer(verifier))
    return importError("the FlatBuffers container is malformed (truncated or corrupt)");
  const fb::Model* model = fb::GetModel(bytes.data());
  return Importer(*model).run();
}

hal::Result<hal::Model> importTfliteFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return importError("cannot open '{}'", path);
  const std::streamoff size = file.tellg();
  if (size < 0) return importError("cannot read '{}'", path);
  if (static_cast<uint64_t>(size) > kMaxTfliteFileBytes)
    return importError("'{}' is {} bytes (at most {} are read)", path, size, kMaxTfliteFileBytes);
  // Aligned storage: the verifier checks alignment of scalars and vectors within the buffer.
  std::vector<uint64_t> storage((static_cast<size_t>(size) + 7) / 8);
  file.seekg(0);
  if (!file.read(reinterpret_cast<char*>(storage.data()), size)) return importError("cannot read '{}'", path);
  auto model = importTflite({reinterpret_cast<const uint8_t*>(storage.data()), static_cast<size_t>(size)});
  if (!model.ok()) {
    hal::Error error = std::move(model).error();
    error.message = fmt::format("{}: {}", path, error.message);
    return error;
  }
  return model;
}

}  // namespace sable::runtime
