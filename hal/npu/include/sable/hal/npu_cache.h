// The sable-npu driver's compilation-cache blobs (docs/cache.md): a model cache holding the
// command stream, its signature for the firmware, the program's metadata and the interface of its
// model, signed with the driver's Ed25519 key; and a data cache holding the packed weights, bound
// to the model cache by its hash. readCacheBlobs verifies everything before it parses anything:
// the signature first, then the format, the token, the driver version, the hardware
// configuration and the data cache's hash.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sable/hal/driver.h"
#include "sable/hal/interfaces.h"
#include "sable/hal/result.h"
#include "sable/hal/types.h"
#include "sable/umd/compiler/compiler.h"
#include "sable/umd/signing.h"

namespace sable::hal {

constexpr uint32_t kModelCacheFormatVersion = 3;
constexpr uint32_t kDataCacheFormatVersion = 3;
// The data cache's header: the packed weights follow it, at an offset aligned for the device, so
// that a data cache read straight into a buffer object is the program's constant region as is.
constexpr uint64_t kDataCacheHeaderBytes = 64;

// What a prepared model needs besides its program: the model's inputs and outputs (types,
// shapes, quantization), enough to validate requests and report output shapes. Its main subgraph
// has the input operands then the output operands and no operations.
Model modelInterface(const Model& model);

// Who may load a blob: the driver's version string and the hardware configuration's identity.
struct CacheIdentity {
  std::string driverVersion;
  std::string hardwareConfig;
};
std::string hardwareConfigIdentity(const sable_hw_config& config);

struct CachedProgram {
  // Without its layer reports, and without its constants: they stay where they are in the data
  // cache, bytes [constantsOffset, constantsOffset + constantsBytes), not copied.
  umd::compiler::CompiledProgram program;
  Model interface;                   // modelInterface() of the compiled model
  umd::Signature streamSignature{};  // the driver's signature of program.stream, for the firmware
  uint64_t constantsOffset = 0;
  uint64_t constantsBytes = 0;
};

// SHA-256-based hash of a whole data cache (docs/cache.md): a two-level tree over 256 KiB leaves,
// so that the leaves are hashed on two threads.
std::array<uint8_t, 32> dataCacheHash(std::span<const uint8_t> dataCache);

// The model cache's signature of `signedPart` (every byte before the signature): Ed25519 over a
// domain and SHA-256(signedPart) (docs/cache.md).
umd::Signature signModelCache(const umd::SigningKey& key, std::span<const uint8_t> signedPart);

// `streamSignature`: the signature the stream was registered with (made with `key` when null);
// `constants`: the program's packed weights (its `constants` when not given).
CacheBlobs writeCacheBlobs(const umd::compiler::CompiledProgram& program, const Model& interface,
                           const CacheToken& token, const CacheIdentity& identity, const umd::SigningKey& key,
                           const umd::Signature* streamSignature = nullptr,
                           std::optional<std::span<const uint8_t>> constants = std::nullopt);

// GENERAL_FAILURE naming what is wrong for any blob that is not exactly one this driver wrote for
// this token, identity and key.
Result<CachedProgram> readCacheBlobs(std::span<const uint8_t> model, std::span<const uint8_t> data,
                                     const CacheToken& token, const CacheIdentity& identity,
                                     const umd::PublicKey& key);

}  // namespace sable::hal
