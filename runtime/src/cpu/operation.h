// The contract between the CPU executor and the operation kernels of the reference device.
//
// The executor owns operand storage. A kernel reads its inputs through OperationContext, decides
// the shape of each output (validating the input shapes and parameters as the NNAPI reference
// does at prepare time), calls setOutputShape() to obtain the output tensor, and writes it.
// A kernel never allocates operand storage itself and never throws; a bad shape or parameter is
// an Error (usually INVALID_ARGUMENT or GENERAL_FAILURE with a message naming the rule).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "sable/hal/extensions.h"
#include "sable/hal/result.h"
#include "sable/hal/types.h"

namespace sable::runtime::cpu {

using float16 = _Float16;  // storage type of TENSOR_FLOAT16 / FLOAT16 (IEEE binary16)

// One operand during one execution: its actual shape and quantization, and its storage.
struct Tensor {
  hal::OperandType type = hal::OperandType::TENSOR_FLOAT32;
  std::vector<uint32_t> dimensions;
  float scale = 0.0f;
  int32_t zeroPoint = 0;
  const hal::SymmPerChannelQuantParams* channelQuant = nullptr;  // per-channel weights only
  uint8_t* buffer = nullptr;  // null when omitted or zero-sized
  size_t length = 0;          // bytes available at buffer
  bool omitted = false;       // an optional input given as NO_VALUE

  uint32_t rank() const { return static_cast<uint32_t>(dimensions.size()); }
  uint32_t dim(uint32_t i) const { return dimensions.at(i); }
  size_t elementCount() const {
    size_t n = 1;
    for (uint32_t d : dimensions) n *= d;
    return n;
  }
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(buffer); }
  template <typename T>
  T* data() { return reinterpret_cast<T*>(buffer); }
  template <typename T>
  std::span<const T> values() const { return {data<T>(), elementCount()}; }
  template <typename T>
  std::span<T> values() { return {data<T>(), elementCount()}; }
};

class OperationContext {
 public:
  virtual ~OperationContext() = default;

  virtual hal::OperationType operationType() const = 0;
  // The operation's name for messages: NNAPI's, or an extension operation's qualified name.
  virtual std::string_view operationName() const { return hal::toString(operationType()); }
  virtual uint32_t inputCount() const = 0;
  virtual uint32_t outputCount() const = 0;

  // Input i (shape, quantization, data). An omitted optional input has omitted == true.
  virtual const Tensor& input(uint32_t i) const = 0;
  bool isOmitted(uint32_t i) const { return i >= inputCount() || input(i).omitted; }

  // Scalar input i of type INT32/UINT32/FLOAT32/FLOAT16/BOOL read as T. Callers check the
  // operand type when the signature allows several (e.g. FLOAT16 or FLOAT32 parameters).
  template <typename T>
  T scalar(uint32_t i) const {
    const Tensor& t = input(i);
    return t.buffer != nullptr ? *t.data<T>() : T{};
  }
  // Reads a FLOAT32 or FLOAT16 scalar input as float.
  float floatScalar(uint32_t i) const {
    return input(i).type == hal::OperandType::FLOAT16 ? static_cast<float>(scalar<float16>(i))
                                                      : scalar<float>(i);
  }
  // Reads a BOOL scalar input.
  bool boolScalar(uint32_t i) const { return scalar<uint8_t>(i) != 0; }

  // The declared type and quantization of output i, and its dimensions as the model gives them
  // (0 = unknown). Kernels take the output scale/zero point from here.
  virtual const Tensor& outputInfo(uint32_t i) const = 0;

  // Fixes the actual shape of output i and returns its storage. Fails when the shape conflicts
  // with the model's known dimensions, or (for model outputs) with OUTPUT_INSUFFICIENT_SIZE when
  // the caller's buffer is too small; the kernel must return that error unchanged.
  virtual hal::Result<Tensor*> setOutputShape(uint32_t i, const std::vector<uint32_t>& dimensions) = 0;
};

using OperationKernel = hal::Result<void> (*)(OperationContext& context);

// What the reference device supports of one operation type: the kernel, and the types of the
// operation's first input that it handles (a query answers "supported" only for those).
// An operation of com.sable.tflite (ops_extension.cc) is registered by `extension`; its `type`
// is then unused, since a model's code for it depends on the model's extensionNameToPrefix.
struct OperationRegistration {
  hal::OperationType type;
  OperationKernel kernel;
  std::vector<hal::OperandType> inputTypes;
  std::optional<hal::SableOperation> extension = std::nullopt;
};

// Each group of kernels lives in its own ops_<group>.cc and appends its registrations here.
void registerConvolutionOperations(std::vector<OperationRegistration>& out);    // ops_convolution.cc
void registerPoolingOperations(std::vector<OperationRegistration>& out);        // ops_pooling.cc
void registerElementwiseOperations(std::vector<OperationRegistration>& out);    // ops_elementwise.cc
void registerActivationOperations(std::vector<OperationRegistration>& out);     // ops_activation.cc
void registerShapeOperations(std::vector<OperationRegistration>& out);          // ops_shape.cc
void registerReductionOperations(std::vector<OperationRegistration>& out);      // ops_reduction.cc
void registerResizeOperations(std::vector<OperationRegistration>& out);         // ops_resize.cc
void registerMiscOperations(std::vector<OperationRegistration>& out);           // ops_misc.cc
void registerDetectionOperations(std::vector<OperationRegistration>& out);      // ops_detection.cc
void registerProposalOperations(std::vector<OperationRegistration>& out);       // ops_proposals.cc
void registerRecurrentOperations(std::vector<OperationRegistration>& out);      // ops_recurrent.cc
void registerQuantizedRecurrentOperations(std::vector<OperationRegistration>& out);  // ops_quantized_recurrent.cc
void registerRandomOperations(std::vector<OperationRegistration>& out);        // ops_random.cc
void registerExtensionOperations(std::vector<OperationRegistration>& out);     // ops_extension.cc

// The registration for an NNAPI operation type, a com.sable.tflite operation, or an operation
// type of `model` (extension codes resolved through its extensionNameToPrefix); nullptr when the
// reference device does not implement it.
const OperationRegistration* findOperation(hal::OperationType type);
const OperationRegistration* findOperation(hal::SableOperation operation);
const OperationRegistration* findOperation(const hal::Model& model, hal::OperationType type);

}  // namespace sable::runtime::cpu
