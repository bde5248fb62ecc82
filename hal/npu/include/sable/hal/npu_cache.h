// The sable-npu driver's compilation-cache blobs (docs/cache.md): a model cache holding the
// program's metadata, the interface of its model and its command stream's signature for the
// firmware, signed with the driver's Ed25519 key, then the stream (which the firmware verifies
// with that signature); and a data cache holding the packed weights, bound to the model cache by
// its digest, keyed with a secret of the driver's. The loader verifies before it parses: the
// signature first, then the token, the driver version, the hardware configuration and, once
// read, the data cache's digest.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
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

constexpr uint32_t kModelCacheFormatVersion = 4;
constexpr uint32_t kDataCacheFormatVersion = 4;
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
  crypto::Signature streamSignature{};  // the driver's signature of program.stream, for the firmware
  std::array<uint8_t, 16> dataSalt{};  // what the data cache's key is derived from
  std::array<uint8_t, 32> dataMac{};   // what the data cache's digest must be
  uint64_t constantsOffset = 0;      // set by verifyDataCache
  uint64_t constantsBytes = 0;
};

// The data cache's key (a secret of the driver's: SigningKey::deriveSecret) is derived from a salt
// that the model cache holds: 16 bytes of a SHA-256 of the data cache, so that two different data
// caches never share a key and the same one is always saved the same.
using DataCacheSalt = std::array<uint8_t, 16>;
DataCacheSalt dataCacheSalt(std::span<const uint8_t> dataCache);
umd::Secret dataCacheKey(const umd::SigningKey& key, const DataCacheSalt& salt);

// The leaves of the data cache's digest tree are the chunks in which the HAL layer hands a data
// cache file over (CacheData::write), so that each is hashed as it is read.
constexpr uint64_t kDataCacheLeafBytes = kCacheChunkBytes;

// What the loader needs of a data cache besides its bytes: its size, its digest (docs/cache.md: a
// SHA-256 over the Poly1305 tags, under the data cache's key, of its kDataCacheLeafBytes leaves)
// and its header (its first kDataCacheHeaderBytes; zeros past a shorter cache).
struct DataCacheDigest {
  uint64_t size = 0;
  std::array<uint8_t, 32> mac{};
  std::array<uint8_t, kDataCacheHeaderBytes> header{};
};

// A data cache's digest computed leaf by leaf while it is read: add() takes each leaf (the
// kDataCacheLeafBytes at a multiple of them; the last one shorter) once, in any order, from
// several threads at once; finish() once all have come.
class DataCacheDigester {
 public:
  DataCacheDigester(uint64_t size, const umd::Secret& key);
  ~DataCacheDigester();
  DataCacheDigester(const DataCacheDigester&) = delete;
  DataCacheDigester& operator=(const DataCacheDigester&) = delete;
  // GENERAL_FAILURE for bytes that are not one whole leaf not added before.
  Result<void> add(uint64_t offset, std::span<const uint8_t> leaf);
  // GENERAL_FAILURE while a leaf is missing.
  Result<DataCacheDigest> finish() const;

 private:
  uint64_t size_;
  umd::Secret key_;
  std::vector<umd::Tag> leaves_;
  std::vector<bool> added_;  // under mutex_, with header_
  std::array<uint8_t, kDataCacheHeaderBytes> header_{};
  mutable std::mutex mutex_;
};

// The digest of a data cache in memory, its leaves digested on two threads.
Result<DataCacheDigest> digestDataCache(std::span<const uint8_t> dataCache, const umd::Secret& key);

// The model cache's signature of `signedPart` (its first bytes, as many as its header says, up to
// the signature): Ed25519 over a domain and SHA-256(signedPart) (docs/cache.md).
crypto::Signature signModelCache(const umd::SigningKey& key, std::span<const uint8_t> signedPart);

// `streamSignature`: the signature the stream was registered with (made with `key` when null);
// `constants`: the program's packed weights (its `constants` when not given).
Result<CacheBlobs> writeCacheBlobs(const umd::compiler::CompiledProgram& program, const Model& interface,
                           const CacheToken& token, const CacheIdentity& identity, const umd::SigningKey& key,
                           const crypto::Signature* streamSignature = nullptr,
                           std::optional<std::span<const uint8_t>> constants = std::nullopt);

// A load in two steps, so that the program can be registered while the data cache is read:
// GENERAL_FAILURE naming what is wrong for any blob that is not exactly one this driver wrote for
// this token, identity and key. verifyModelCache checks the model cache's signed part and parses
// it (the stream after it is the firmware's to verify); verifyDataCache then checks the data
// cache, known by its digest (its bytes stay wherever they were read to: the sable-npu driver's
// buffer object), against it.
Result<CachedProgram> verifyModelCache(std::span<const uint8_t> model, const CacheToken& token,
                                       const CacheIdentity& identity, const crypto::PublicKey& key);
Result<void> verifyDataCache(CachedProgram& cached, const DataCacheDigest& data);
// The stream's size as a model cache's header implies it, before anything is verified (nullopt
// when the header cannot be that of a format-4 blob): only to size a buffer object early, while
// verifyModelCache runs; it is the verified size whenever verifyModelCache accepts the blob.
std::optional<uint64_t> unverifiedStreamBytes(std::span<const uint8_t> model);
// Both, for a data cache in memory.
Result<CachedProgram> readCacheBlobs(std::span<const uint8_t> model, std::span<const uint8_t> data,
                                     const CacheToken& token, const CacheIdentity& identity,
                                     const umd::SigningKey& key);

}  // namespace sable::hal
