// Running a prepared model on plain byte buffers: builds the shared-memory request (inputs, then
// outputs, in one pool), executes, and copies the outputs out. What the CLI and tests use when
// they do not manage request memory themselves.
#pragma once

#include <cstdint>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/shared_memory.h"
#include "sable/hal/types.h"
#include "sable/runtime/device.h"

namespace sable::runtime {

struct OutputTensor {
  std::vector<uint8_t> bytes;        // trimmed to the produced shape
  std::vector<uint32_t> dimensions;  // the produced shape
};

struct ExecutionWithBuffers {
  std::vector<OutputTensor> outputs;
  hal::Timing timing;
  std::vector<uint64_t> deviceCounters;  // as ExecutionOutput::deviceCounters
};

// A request over one shared-memory pool holding the inputs (copied in) and room for the outputs,
// for a client that executes through the HAL itself (an asynchronous execution, `sable mlts`).
// Inputs and output capacities as for executeWithBuffers.
struct PooledRequest {
  hal::Request request;
  hal::MemoryPool pool;  // also request.pools[0]
};
hal::Result<PooledRequest> makePooledRequest(const hal::Model& model, const std::vector<std::vector<uint8_t>>& inputs,
                                             size_t outputCapacity = 0);

// Inputs: one byte vector per model input, shapes as the model declares them. Each output gets
// `outputCapacity` bytes, or when 0 its declared size (1 MiB when a dimension is unknown).
hal::Result<ExecutionWithBuffers> executeWithBuffers(PreparedModel& prepared, const hal::Model& model,
                                                     const std::vector<std::vector<uint8_t>>& inputs,
                                                     size_t outputCapacity = 0, const ExecuteOptions& options = {});

}  // namespace sable::runtime
