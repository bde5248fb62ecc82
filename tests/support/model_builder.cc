#include "model_builder.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

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

Quant8Mismatches compareQuant8(const std::vector<uint8_t>& expected, const std::vector<uint8_t>& actual, bool isSigned,
                               int32_t tolerance) {
  constexpr size_t kListed = 8;
  const auto value = [&](uint8_t byte) { return isSigned ? int32_t{static_cast<int8_t>(byte)} : int32_t{byte}; };
  Quant8Mismatches m;
  if (expected.size() != actual.size()) {
    m.count = std::max(expected.size(), actual.size());
    m.first = fmt::format("  sizes differ: reference {} bytes, device {}\n", expected.size(), actual.size());
    return m;
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::abs(value(actual[i]) - value(expected[i])) <= tolerance) continue;
    if (++m.count <= kListed) {
      m.first += fmt::format("  element {}: reference {}, device {}\n", i, value(expected[i]), value(actual[i]));
    }
  }
  return m;
}

}  // namespace sable::testing
