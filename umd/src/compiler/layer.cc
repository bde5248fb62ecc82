// The layer protocol's helpers (layer.h).
#include "sable/umd/compiler/layer.h"

namespace sable::umd::compiler {

uint64_t ConstantPool::add(std::span<const uint8_t> bytes, uint64_t alignment) {
  const uint64_t offset = (bytes_.size() + alignment - 1) / alignment * alignment;
  bytes_.resize(offset);
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  return offset;
}

hal::Result<uint32_t> beginLayer(LoweringContext& context) {
  if (!context.barrierPending) return 0u;
  SABLE_TRY(context.builder.add(Sync{}, {.wait = kStoreToCompute, .signal = kComputeToLoad}));
  context.barrierPending = false;
  return kComputeToLoad;
}

void endLayer(LoweringContext& context) { context.barrierPending = true; }

std::array<int64_t, SABLE_DEP_CHANNELS> tokenBalance(std::span<const StreamCommand> commands) {
  std::array<int64_t, SABLE_DEP_CHANNELS> balance{};
  for (const StreamCommand& c : commands) {
    for (uint32_t ch = 0; ch < SABLE_DEP_CHANNELS; ++ch) {
      balance[ch] += (c.deps.signal >> ch & 1u) - int64_t{c.deps.wait >> ch & 1u};
    }
  }
  return balance;
}

std::pair<int32_t, int32_t> activationRange(hal::FusedActivation activation, const Quantization& output) {
  int32_t lo = 0;
  int32_t hi = 0;
  hal::quantizedActivationRange(activation, output.type, output.scale, output.zeroPoint, &lo, &hi);
  return {lo, hi};
}

}  // namespace sable::umd::compiler
