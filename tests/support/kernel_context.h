// Test support: run one CPU reference kernel directly, without a model, through a stand-in
// OperationContext. For operands a model cannot express directly (a zero-sized tensor only arises
// in the middle of a model). Needs runtime/src on the include path of the test binary (the kernel
// contract is internal to the runtime).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cpu/operation.h"
#include "operation_test_support.h"

namespace sable::testing {

// Runs one kernel on hand-made operands: each Arg is an input whose bytes stay owned by the Arg
// (so `args` must outlive the context). Only the first output is supported.
class KernelContext final : public runtime::cpu::OperationContext {
 public:
  KernelContext(hal::OperationType type, std::vector<Arg>& args, const OutputDecl& output) : type_(type) {
    for (Arg& arg : args) {
      runtime::cpu::Tensor t;
      t.type = arg.type;
      t.dimensions = arg.dims;
      t.scale = arg.scale;
      t.zeroPoint = arg.zeroPoint;
      t.buffer = arg.bytes.empty() ? nullptr : arg.bytes.data();
      t.length = arg.bytes.size();
      inputs_.push_back(t);
    }
    declared_.type = output.type;
    declared_.dimensions = output.dims;
    declared_.scale = output.scale;
    declared_.zeroPoint = output.zeroPoint;
  }
  hal::OperationType operationType() const override { return type_; }
  uint32_t inputCount() const override { return static_cast<uint32_t>(inputs_.size()); }
  uint32_t outputCount() const override { return 1; }
  const runtime::cpu::Tensor& input(uint32_t i) const override { return inputs_.at(i); }
  const runtime::cpu::Tensor& outputInfo(uint32_t) const override { return declared_; }
  // The shape the kernel gave its output (empty until it called setOutputShape).
  const std::vector<uint32_t>& producedShape() const { return output_.dimensions; }
  hal::Result<runtime::cpu::Tensor*> setOutputShape(uint32_t, const std::vector<uint32_t>& dimensions) override {
    output_ = declared_;
    output_.dimensions = dimensions;
    // One spare byte so that a zero-sized output still has a non-null buffer the kernel may hold.
    storage_.assign(output_.elementCount() * hal::sizeOfElement(output_.type) + 1, 0);
    output_.buffer = storage_.data();
    output_.length = storage_.size() - 1;
    return &output_;
  }

 private:
  hal::OperationType type_;
  std::vector<runtime::cpu::Tensor> inputs_;
  runtime::cpu::Tensor declared_;
  runtime::cpu::Tensor output_;
  std::vector<uint8_t> storage_;
};

// Runs the registered kernel of `type` on the operands.
inline hal::Result<void> runKernel(hal::OperationType type, std::vector<Arg> args, const OutputDecl& output) {
  const runtime::cpu::OperationRegistration* registration = runtime::cpu::findOperation(type);
  if (registration == nullptr) return hal::generalFailure("{} is not registered", hal::toString(type));
  KernelContext context(type, args, output);
  return registration->kernel(context);
}

// Runs the kernel expecting a clean failure whose message names the broken rule.
inline void expectKernelFails(hal::OperationType type, std::vector<Arg> args, const OutputDecl& output,
                              const std::string& rule) {
  auto result = runKernel(type, std::move(args), output);
  ASSERT_FALSE(result.ok()) << hal::toString(type) << " succeeded but should fail on: " << rule;
  EXPECT_NE(result.error().message.find(rule), std::string::npos)
      << "error message \"" << result.error().message << "\" does not mention \"" << rule << "\"";
}

}  // namespace sable::testing
