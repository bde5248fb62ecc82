// The sable-npu driver's compilation-cache blobs (docs/cache.md): a model cache holding the
// command stream, the program's metadata and the interface of its model, signed with the driver's
// Ed25519 key; and a data cache holding the packed weights, bound to the model cache by its hash.
// readCacheBlobs verifies everything before it parses anything: the signature first, then the
// format, the token, the driver version, the hardware configuration and the data cache's hash.
#pragma once

#include <cstdint>
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

constexpr uint32_t kModelCacheFormatVersion = 1;
constexpr uint32_t kDataCacheFormatVersion = 1;

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
  umd::compiler::CompiledProgram program;  // without its layer reports
  Model interface;                         // modelInterface() of the compiled model
};

CacheBlobs writeCacheBlobs(const umd::compiler::CompiledProgram& program, const Model& interface,
                           const CacheToken& token, const CacheIdentity& identity, const umd::SigningKey& key);

// GENERAL_FAILURE naming what is wrong for any blob that is not exactly one this driver wrote for
// this token, identity and key.
Result<CachedProgram> readCacheBlobs(std::span<const uint8_t> model, std::span<const uint8_t> data,
                                     const CacheToken& token, const CacheIdentity& identity,
                                     const umd::PublicKey& key);

}  // namespace sable::hal
