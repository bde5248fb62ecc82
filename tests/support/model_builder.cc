#include "model_builder.h"

#include "sable/runtime/cpu_reference_device.h"

namespace sable::testing {

hal::Result<std::vector<RunOutput>> run(runtime::Device& device, const hal::Model& model,
                                        const std::vector<std::vector<uint8_t>>& inputs, size_t outputCapacity) {
  SABLE_ASSIGN_OR_RETURN(auto prepared, device.prepareModel(model));
  SABLE_ASSIGN_OR_RETURN(auto result, runtime::executeWithBuffers(*prepared, model, inputs, outputCapacity));
  return std::move(result.outputs);
}

hal::Result<std::vector<RunOutput>> runOnCpu(const hal::Model& model, const std::vector<std::vector<uint8_t>>& inputs,
                                             size_t outputCapacity) {
  auto device = runtime::makeCpuReferenceDevice();
  return run(*device, model, inputs, outputCapacity);
}

}  // namespace sable::testing
