#include "sable/runtime/execution.h"

#include <algorithm>
#include <cstring>

#include "sable/hal/shared_memory.h"

namespace sable::runtime {

hal::Result<PooledRequest> makePooledRequest(const hal::Model& model, const std::vector<std::vector<uint8_t>>& inputs,
                                             size_t outputCapacity) {
  constexpr size_t kUnknownShapeCapacity = 1 << 20;
  std::vector<size_t> outputSizes;
  for (uint32_t index : model.main.outputIndexes) {
    const hal::Operand& operand = model.main.operands.at(index);
    size_t bytes = outputCapacity;
    if (bytes == 0) {
      auto declared = hal::sizeOfData(operand.type, operand.dimensions);
      if (!declared) return hal::invalidArgument("output operand {} is too large to execute", index);
      bytes = hal::hasUnknownDimensions(operand.type, operand.dimensions) ? kUnknownShapeCapacity : *declared;
    }
    outputSizes.push_back(bytes);
  }
  // Every argument starts 8-byte aligned, as a client's separately allocated buffers would, so
  // that kernels may access any element type in place.
  auto aligned = [](size_t n) { return (n + 7) / 8 * 8; };
  size_t total = 0;
  for (const auto& in : inputs) total += aligned(in.size());
  for (size_t s : outputSizes) total += aligned(s);
  if (total > UINT32_MAX) return hal::invalidArgument("request of {} bytes exceeds the 4 GiB a pool can address", total);
  SABLE_ASSIGN_OR_RETURN(auto pool, hal::SharedMemory::create(total, "sable-request"));

  hal::Request request;
  request.pools.push_back(pool);
  uint32_t offset = 0;
  for (const auto& in : inputs) {
    hal::RequestArgument argument;
    argument.location = {0, offset, static_cast<uint32_t>(in.size())};
    if (!in.empty()) std::memcpy(pool->data() + offset, in.data(), in.size());
    offset += static_cast<uint32_t>(aligned(in.size()));
    request.inputs.push_back(argument);
  }
  for (size_t s : outputSizes) {
    hal::RequestArgument argument;
    argument.location = {0, offset, static_cast<uint32_t>(s)};
    offset += static_cast<uint32_t>(aligned(s));
    request.outputs.push_back(argument);
  }
  return PooledRequest{std::move(request), std::move(pool)};
}

hal::Result<ExecutionWithBuffers> executeWithBuffers(PreparedModel& prepared, const hal::Model& model,
                                                     const std::vector<std::vector<uint8_t>>& inputs,
                                                     size_t outputCapacity, const ExecuteOptions& options) {
  SABLE_ASSIGN_OR_RETURN(PooledRequest pooled, makePooledRequest(model, inputs, outputCapacity));
  const hal::Request& request = pooled.request;
  const hal::MemoryPool& pool = pooled.pool;
  SABLE_ASSIGN_OR_RETURN(auto result, prepared.execute(request, options));
  ExecutionWithBuffers out;
  out.timing = result.timing;
  out.deviceCounters = result.deviceCounters;
  for (size_t i = 0; i < request.outputs.size(); ++i) {
    OutputTensor tensor;
    tensor.dimensions = result.outputShapes.at(i).dimensions;
    size_t bytes = hal::sizeOfElement(model.main.operands[model.main.outputIndexes[i]].type);
    for (uint32_t d : tensor.dimensions) bytes *= d;
    const uint8_t* p = pool->data() + request.outputs[i].location.offset;
    tensor.bytes.assign(p, p + std::min<size_t>(bytes, request.outputs[i].location.length));
    out.outputs.push_back(std::move(tensor));
  }
  return out;
}

}  // namespace sable::runtime
