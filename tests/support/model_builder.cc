#include "model_builder.h"

#include "sable/hal/shared_memory.h"
#include "sable/runtime/cpu_reference_device.h"

namespace sable::testing {

hal::Result<std::vector<RunOutput>> run(runtime::Device& device, const hal::Model& model,
                                        const std::vector<std::vector<uint8_t>>& inputs, size_t outputCapacity) {
  SABLE_ASSIGN_OR_RETURN(auto prepared, device.prepareModel(model));
  hal::Request request;
  size_t total = 0;
  std::vector<size_t> outputSizes;
  for (uint32_t index : model.main.outputIndexes) {
    const hal::Operand& operand = model.main.operands[index];
    size_t bytes = outputCapacity;
    if (bytes == 0) {
      bytes = hal::sizeOfElement(operand.type);
      bool known = !operand.dimensions.empty() || !hal::isTensorType(operand.type);
      for (uint32_t d : operand.dimensions) {
        bytes *= d;
        known = known && d != 0;
      }
      if (!known) bytes = 1 << 20;
    }
    outputSizes.push_back(bytes);
  }
  for (const auto& in : inputs) total += in.size();
  for (size_t s : outputSizes) total += s;
  SABLE_ASSIGN_OR_RETURN(auto pool, hal::SharedMemory::create(total + 1));
  request.pools.push_back(pool);
  uint32_t offset = 0;
  for (const auto& in : inputs) {
    hal::RequestArgument argument;
    argument.location = {0, offset, static_cast<uint32_t>(in.size())};
    if (!in.empty()) std::memcpy(pool->data() + offset, in.data(), in.size());
    offset += static_cast<uint32_t>(in.size());
    request.inputs.push_back(argument);
  }
  for (size_t s : outputSizes) {
    hal::RequestArgument argument;
    argument.location = {0, offset, static_cast<uint32_t>(s)};
    offset += static_cast<uint32_t>(s);
    request.outputs.push_back(argument);
  }
  SABLE_ASSIGN_OR_RETURN(auto result, prepared->execute(request, {}));
  std::vector<RunOutput> outputs;
  for (size_t i = 0; i < request.outputs.size(); ++i) {
    RunOutput out;
    out.dimensions = result.outputShapes.at(i).dimensions;
    size_t bytes = hal::sizeOfElement(model.main.operands[model.main.outputIndexes[i]].type);
    for (uint32_t d : out.dimensions) bytes *= d;
    const uint8_t* p = pool->data() + request.outputs[i].location.offset;
    out.bytes.assign(p, p + std::min<size_t>(bytes, request.outputs[i].location.length));
    outputs.push_back(std::move(out));
  }
  return outputs;
}

hal::Result<std::vector<RunOutput>> runOnCpu(const hal::Model& model, const std::vector<std::vector<uint8_t>>& inputs,
                                             size_t outputCapacity) {
  auto device = runtime::makeCpuReferenceDevice();
  return run(*device, model, inputs, outputCapacity);
}

}  // namespace sable::testing
