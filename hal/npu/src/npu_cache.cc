#include "sable/hal/npu_cache.h"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "sable/hal/two_threads.h"

namespace sable::hal {
namespace {

constexpr std::array<uint8_t, 8> kModelMagic = {'S', 'A', 'B', 'L', 'E', 'M', 'C', 0};
constexpr std::array<uint8_t, 8> kDataMagic = {'S', 'A', 'B', 'L', 'E', 'D', 'C', 0};
constexpr size_t kHashBytes = 32;
using Hash = std::array<uint8_t, kHashBytes>;
// Limits that keep a hostile blob from asking for absurd allocations before it fails.
constexpr uint32_t kMaxStringBytes = 4096;
constexpr uint32_t kMaxTensors = 1 << 16;
constexpr uint32_t kMaxRank = 16;
// Where the model cache's header says how many bytes its signature signs.
constexpr size_t kSignedBytesOffset = 12;

Hash blake2b(std::span<const uint8_t> bytes, std::string_view domain) {
  Hash out{};
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, out.size());
  crypto_generichash_update(&state, reinterpret_cast<const uint8_t*>(domain.data()), domain.size());
  crypto_generichash_update(&state, bytes.data(), bytes.size());
  crypto_generichash_final(&state, out.data(), out.size());
  return out;
}

Hash tokenHash(const CacheToken& token) { return blake2b(token, "sable cache token v1"); }

void putU64(uint8_t* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}

constexpr size_t kLeafBytes = kDataCacheLeafBytes;

class Writer {
 public:
  void bytes(std::span<const uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void string(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    bytes(std::span(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
  }
  std::vector<uint8_t>& out() { return out_; }

 private:
  std::vector<uint8_t> out_;
};

// Reads little-endian fields; any read past the end fails the whole parse (`ok` false).
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> in) : in_(in) {}
  bool ok() const { return ok_; }
  bool atEnd() const { return pos_ == in_.size(); }
  size_t position() const { return pos_; }
  std::span<const uint8_t> bytes(uint64_t n) {
    if (!ok_ || n > in_.size() - pos_) {
      ok_ = false;
      return {};
    }
    auto out = in_.subspan(pos_, n);
    pos_ += n;
    return out;
  }
  uint32_t u32() {
    auto b = bytes(4);
    uint32_t v = 0;
    for (size_t i = 0; i < b.size(); ++i) v |= uint32_t{b[i]} << (8 * i);
    return v;
  }
  uint64_t u64() {
    auto b = bytes(8);
    uint64_t v = 0;
    for (size_t i = 0; i < b.size(); ++i) v |= uint64_t{b[i]} << (8 * i);
    return v;
  }
  std::string string() {
    const uint32_t n = u32();
    if (n > kMaxStringBytes) ok_ = false;
    auto b = bytes(ok_ ? n : 0);
    return std::string(b.begin(), b.end());
  }
  Hash hash() {
    Hash h{};
    auto b = bytes(h.size());
    if (ok_) std::memcpy(h.data(), b.data(), h.size());
    return h;
  }

 private:
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// What the model cache's signature signs: a domain, then SHA-256 of every byte before the
// signature (a prehash: the long part is hashed once, with the CPU's SHA extensions, rather than
// by Ed25519's SHA-512).
std::array<uint8_t, 32 + kHashBytes> modelCacheSignedMessage(std::span<const uint8_t> signedPart) {
  constexpr std::string_view kDomain = "sable model cache v4 sha256 sig:";
  static_assert(kDomain.size() == 32);
  std::array<uint8_t, 32 + kHashBytes> message{};
  std::memcpy(message.data(), kDomain.data(), kDomain.size());
  const crypto::Digest digest = crypto::sha256(signedPart);
  std::memcpy(message.data() + kDomain.size(), digest.data(), digest.size());
  return message;
}

Error corrupt(std::string_view what) { return generalFailure("model cache rejected: {}", what); }

}  // namespace

DataCacheSalt dataCacheSalt(std::span<const uint8_t> dataCache) {
  const crypto::Digest digest = crypto::Sha256().update("sable data cache salt v4").update(dataCache).finish();
  DataCacheSalt salt{};
  std::copy_n(digest.begin(), salt.size(), salt.begin());
  return salt;
}

umd::Secret dataCacheKey(const umd::SigningKey& key, const DataCacheSalt& salt) {
  return key.deriveSecret("sable data cache v4", salt);
}

// The data cache's digest (docs/cache.md). Leaf i: the Poly1305 tag of its bytes under the data
// cache's key with nonce i; root: SHA-256("sable data cache v4" ‖ le64(size) ‖ tag 0 ‖ tag 1 ‖ …),
// the leaves over consecutive kLeafBytes slices (the last one shorter; one empty leaf for an
// empty cache). Each leaf's position is its nonce, and the size and the number of leaves are
// hashed, so no two caches share a root; without the key, no tag can be made.
DataCacheDigester::DataCacheDigester(uint64_t size, const umd::Secret& key)
    : size_(size),
      key_(key),
      leaves_(std::max<uint64_t>(1, (size + kLeafBytes - 1) / kLeafBytes)),
      added_(leaves_.size()) {}

DataCacheDigester::~DataCacheDigester() { sodium_memzero(key_.data(), key_.size()); }

Result<void> DataCacheDigester::add(uint64_t offset, std::span<const uint8_t> leaf) {
  const uint64_t index = offset / kLeafBytes;
  if (offset % kLeafBytes != 0 || offset >= size_ || leaf.size() != std::min<uint64_t>(kLeafBytes, size_ - offset)) {
    return generalFailure("data cache: bytes [{}, +{}) are not a leaf of a {}-byte cache", offset, leaf.size(), size_);
  }
  SABLE_ASSIGN_OR_RETURN(const umd::Tag tag, umd::authenticate(key_, index, leaf));
  std::lock_guard lock(mutex_);
  if (added_[index]) return generalFailure("data cache: bytes [{}, +{}) came twice", offset, leaf.size());
  added_[index] = true;
  leaves_[index] = tag;
  if (index == 0) std::copy_n(leaf.begin(), std::min(leaf.size(), header_.size()), header_.begin());
  return {};
}

Result<DataCacheDigest> DataCacheDigester::finish() const {
  std::lock_guard lock(mutex_);
  std::vector<umd::Tag> leaves = leaves_;
  if (size_ == 0) {
    SABLE_ASSIGN_OR_RETURN(leaves[0], umd::authenticate(key_, 0, {}));
  } else if (!std::all_of(added_.begin(), added_.end(), [](bool added) { return added; })) {
    return generalFailure("data cache: not all of its {} bytes were read", size_);
  }
  std::array<uint8_t, 8> size{};
  putU64(size.data(), size_);
  crypto::Sha256 root;
  root.update("sable data cache v4").update(size);
  for (const umd::Tag& leaf : leaves) root.update(leaf);
  return DataCacheDigest{.size = size_, .mac = root.finish(), .header = header_};
}

Result<DataCacheDigest> digestDataCache(std::span<const uint8_t> dataCache, const umd::Secret& key) {
  DataCacheDigester digester(dataCache.size(), key);
  const uint64_t leaves = (dataCache.size() + kLeafBytes - 1) / kLeafBytes;
  SABLE_TRY(forEachOnTwoThreads(leaves, [&](uint64_t i) {
    const size_t begin = i * kLeafBytes;
    return digester.add(begin, dataCache.subspan(begin, std::min(kLeafBytes, dataCache.size() - begin)));
  }));
  return digester.finish();
}

crypto::Signature signModelCache(const umd::SigningKey& key, std::span<const uint8_t> signedPart) {
  return key.sign(modelCacheSignedMessage(signedPart));
}

Model modelInterface(const Model& model) {
  Model out;
  for (bool outputs : {false, true}) {
    const auto& indexes = outputs ? model.main.outputIndexes : model.main.inputIndexes;
    for (uint32_t index : indexes) {
      const Operand& source = model.main.operands.at(index);
      Operand o;
      o.type = source.type;
      o.dimensions = source.dimensions;
      o.scale = source.scale;
      o.zeroPoint = source.zeroPoint;
      o.lifetime = outputs ? OperandLifeTime::SUBGRAPH_OUTPUT : OperandLifeTime::SUBGRAPH_INPUT;
      (outputs ? out.main.outputIndexes : out.main.inputIndexes).push_back(static_cast<uint32_t>(out.main.operands.size()));
      out.main.operands.push_back(std::move(o));
    }
  }
  return out;
}

// config_id is generated from every parameter of the configuration (rtl/spec/gen_isa.py), so it
// changes with any of them; the name is for the reader of an error message.
std::string hardwareConfigIdentity(const sable_hw_config& c) {
  return fmt::format("{} (config id {:08x})", c.name != nullptr ? c.name : "?", c.config_id);
}

Result<CacheBlobs> writeCacheBlobs(const umd::compiler::CompiledProgram& program, const Model& interface,
                           const CacheToken& token, const CacheIdentity& identity, const umd::SigningKey& key,
                           const crypto::Signature* streamSignature, std::optional<std::span<const uint8_t>> constants) {
  const std::span<const uint8_t> weights = constants.value_or(std::span<const uint8_t>(program.constants));
  CacheBlobs blobs;
  Writer data;
  data.out().reserve(kDataCacheHeaderBytes + weights.size());
  data.bytes(kDataMagic);
  data.u32(kDataCacheFormatVersion);
  data.u32(0);
  data.u64(weights.size());
  while (data.out().size() < kDataCacheHeaderBytes) data.u32(0);
  data.bytes(weights);
  blobs.data = std::move(data.out());

  Writer payload;
  payload.u32(program.regionCount);
  payload.u32(program.scratchRegion);
  payload.u32(program.constantRegion);
  payload.u64(program.scratchBytes);
  for (const auto* sizes : {&program.inputBytes, &program.outputBytes}) {
    payload.u32(static_cast<uint32_t>(sizes->size()));
    for (uint64_t b : *sizes) payload.u64(b);
  }
  for (const auto* indexes : {&interface.main.inputIndexes, &interface.main.outputIndexes}) {
    payload.u32(static_cast<uint32_t>(indexes->size()));
    for (uint32_t index : *indexes) {
      const Operand& o = interface.main.operands.at(index);
      payload.u32(static_cast<uint32_t>(o.type));
      payload.u32(static_cast<uint32_t>(o.dimensions.size()));
      for (uint32_t d : o.dimensions) payload.u32(d);
      uint32_t scaleBits = 0;
      std::memcpy(&scaleBits, &o.scale, sizeof scaleBits);
      payload.u32(scaleBits);
      payload.u32(static_cast<uint32_t>(o.zeroPoint));
    }
  }
  payload.u64(program.stream.size());
  payload.bytes(streamSignature != nullptr ? *streamSignature : key.signStream(program.stream));

  const DataCacheSalt salt = dataCacheSalt(blobs.data);
  // Only an OpenSSL failure could fail this; a cache that cannot be made is then not saved.
  auto digest = digestDataCache(blobs.data, dataCacheKey(key, salt));
  if (!digest.ok()) return digest.error();
  Writer model;
  model.bytes(kModelMagic);
  model.u32(kModelCacheFormatVersion);
  model.u32(0);  // the signed part's size, written below
  model.bytes(tokenHash(token));
  model.bytes(salt);
  model.bytes(digest->mac);
  model.string(identity.driverVersion);
  model.string(identity.hardwareConfig);
  model.u64(payload.out().size());
  model.bytes(payload.out());
  std::vector<uint8_t>& out = model.out();
  const auto signedBytes = static_cast<uint32_t>(out.size());
  for (int i = 0; i < 4; ++i) out[kSignedBytesOffset + i] = static_cast<uint8_t>(signedBytes >> (8 * i));
  const crypto::Signature signature = signModelCache(key, out);
  model.bytes(signature);
  model.bytes(program.stream);
  blobs.model = std::move(out);
  return blobs;
}

Result<CachedProgram> readCacheBlobs(std::span<const uint8_t> modelBlob, std::span<const uint8_t> dataBlob,
                                     const CacheToken& token, const CacheIdentity& identity,
                                     const umd::SigningKey& key) {
  SABLE_ASSIGN_OR_RETURN(CachedProgram cached, verifyModelCache(modelBlob, token, identity, key.publicKey()));
  SABLE_ASSIGN_OR_RETURN(const DataCacheDigest digest, digestDataCache(dataBlob, dataCacheKey(key, cached.dataSalt)));
  SABLE_TRY(verifyDataCache(cached, digest));
  return cached;
}

std::optional<uint64_t> unverifiedStreamBytes(std::span<const uint8_t> modelBlob) {
  if (modelBlob.size() < kSignedBytesOffset + 4 + crypto::kSignatureBytes) return std::nullopt;
  Reader unverified(modelBlob.first(kSignedBytesOffset + 4));
  auto magic = unverified.bytes(kModelMagic.size());
  if (!std::equal(magic.begin(), magic.end(), kModelMagic.begin()) || unverified.u32() != kModelCacheFormatVersion) {
    return std::nullopt;
  }
  const uint32_t signedBytes = unverified.u32();
  if (signedBytes < kSignedBytesOffset + 4 || signedBytes > modelBlob.size() - crypto::kSignatureBytes) return std::nullopt;
  return modelBlob.size() - signedBytes - crypto::kSignatureBytes;  // what verifyModelCache requires of it
}

Result<CachedProgram> verifyModelCache(std::span<const uint8_t> modelBlob, const CacheToken& token,
                                       const CacheIdentity& identity, const crypto::PublicKey& key) {
  if (sodium_init() < 0) return generalFailure("libsodium could not be initialised");
  // 1. The signature, over the signed part: nothing else is read from an unsigned blob but the
  // signed part's size, which says where the signature is, and the version, which names the
  // format of a blob signed another way (formats 1 to 3).
  if (modelBlob.size() < kSignedBytesOffset + 4 + crypto::kSignatureBytes) return corrupt("shorter than its header");
  Reader unverified(modelBlob.first(kSignedBytesOffset + 4));
  auto magic = unverified.bytes(kModelMagic.size());
  if (!std::equal(magic.begin(), magic.end(), kModelMagic.begin())) return corrupt("wrong magic");
  const uint32_t version = unverified.u32();
  if (version != kModelCacheFormatVersion) {
    return corrupt(fmt::format("format version {} (this driver reads {})", version, kModelCacheFormatVersion));
  }
  const uint32_t signedBytes = unverified.u32();
  if (signedBytes < kSignedBytesOffset + 4 || signedBytes > modelBlob.size() - crypto::kSignatureBytes) {
    return corrupt("its signature does not verify with this driver's key (altered, truncated, or not ours)");
  }
  const auto signedPart = modelBlob.first(signedBytes);
  crypto::Signature signature{};
  std::memcpy(signature.data(), modelBlob.data() + signedBytes, signature.size());
  if (!crypto::verifySignature(key, modelCacheSignedMessage(signedPart), signature)) {
    return corrupt("its signature does not verify with this driver's key (altered, truncated, or not ours)");
  }
  // 2. Header: token, who wrote it, for which hardware, and the data cache it goes with.
  Reader r(signedPart.subspan(kSignedBytesOffset + 4));
  const Hash storedToken = r.hash();
  CachedProgram out;
  auto salt = r.bytes(out.dataSalt.size());
  if (r.ok()) std::copy(salt.begin(), salt.end(), out.dataSalt.begin());
  out.dataMac = r.hash();
  const std::string driverVersion = r.string();
  const std::string hardware = r.string();
  if (!r.ok()) return corrupt("truncated header");
  if (storedToken != tokenHash(token)) return corrupt("it was saved under another caching token");
  if (driverVersion != identity.driverVersion) {
    return corrupt(fmt::format("written by driver {}, this is {}", driverVersion, identity.driverVersion));
  }
  if (hardware != identity.hardwareConfig) {
    return corrupt(fmt::format("compiled for hardware '{}', the device is '{}'", hardware, identity.hardwareConfig));
  }
  // 3. The payload.
  const uint64_t payloadBytes = r.u64();
  auto payload = r.bytes(payloadBytes);
  if (!r.ok() || !r.atEnd()) return corrupt("payload size disagrees with the blob");
  Reader p(payload);
  umd::compiler::CompiledProgram& program = out.program;
  program.regionCount = p.u32();
  program.scratchRegion = p.u32();
  program.constantRegion = p.u32();
  program.scratchBytes = p.u64();
  for (auto* sizes : {&program.inputBytes, &program.outputBytes}) {
    const uint32_t n = p.u32();
    if (n > kMaxTensors) return corrupt("tensor count out of range");
    for (uint32_t i = 0; i < n && p.ok(); ++i) sizes->push_back(p.u64());
  }
  for (bool outputs : {false, true}) {
    const uint32_t n = p.u32();
    if (n > kMaxTensors) return corrupt("operand count out of range");
    for (uint32_t i = 0; i < n && p.ok(); ++i) {
      Operand o;
      o.type = static_cast<OperandType>(p.u32());
      const uint32_t rank = p.u32();
      if (rank > kMaxRank) return corrupt("operand rank out of range");
      for (uint32_t d = 0; d < rank; ++d) o.dimensions.push_back(p.u32());
      const uint32_t scaleBits = p.u32();
      std::memcpy(&o.scale, &scaleBits, sizeof o.scale);
      o.zeroPoint = static_cast<int32_t>(p.u32());
      o.lifetime = outputs ? OperandLifeTime::SUBGRAPH_OUTPUT : OperandLifeTime::SUBGRAPH_INPUT;
      auto& indexes = outputs ? out.interface.main.outputIndexes : out.interface.main.inputIndexes;
      indexes.push_back(static_cast<uint32_t>(out.interface.main.operands.size()));
      out.interface.main.operands.push_back(std::move(o));
    }
  }
  const uint64_t streamBytes = p.u64();
  auto streamSignature = p.bytes(out.streamSignature.size());
  if (!p.ok() || !p.atEnd()) return corrupt("malformed payload");
  // The stream follows the signature. The firmware verifies it with its signature before it
  // validates or runs it; the driver does not parse it.
  if (streamBytes != modelBlob.size() - signedBytes - crypto::kSignatureBytes) {
    return corrupt("the command stream's size disagrees with the blob");
  }
  const auto stream = modelBlob.subspan(signedBytes + crypto::kSignatureBytes);
  program.stream.assign(stream.begin(), stream.end());
  std::memcpy(out.streamSignature.data(), streamSignature.data(), out.streamSignature.size());
  if (program.inputBytes.size() != out.interface.main.inputIndexes.size() ||
      program.outputBytes.size() != out.interface.main.outputIndexes.size() ||
      program.regionCount != program.inputBytes.size() + program.outputBytes.size() + 2 ||
      program.scratchRegion != program.regionCount - 2 || program.constantRegion != program.regionCount - 1) {
    return corrupt("inconsistent program metadata");
  }
  return out;
}

Result<void> verifyDataCache(CachedProgram& out, const DataCacheDigest& data) {
  // 4. The data cache: the one saved with this model cache. Its header is then well-formed unless
  // the driver that signed it was wrong. The constants are left in place: the caller uses them
  // where they are.
  if (data.mac != out.dataMac) return corrupt("the data cache is not the one saved with this model cache");
  Reader d(data.header);
  auto dataMagic = d.bytes(kDataMagic.size());
  const uint32_t dataVersion = d.u32();
  const uint32_t dataReserved = d.u32();
  const uint64_t constantBytes = d.u64();
  auto padding = d.bytes(kDataCacheHeaderBytes - d.position());
  if (!d.ok() || data.size < kDataCacheHeaderBytes || data.size - kDataCacheHeaderBytes != constantBytes ||
      !std::equal(dataMagic.begin(), dataMagic.end(), kDataMagic.begin()) ||
      dataVersion != kDataCacheFormatVersion || dataReserved != 0 ||
      !std::all_of(padding.begin(), padding.end(), [](uint8_t b) { return b == 0; })) {
    return corrupt("malformed data cache");
  }
  out.constantsOffset = kDataCacheHeaderBytes;
  out.constantsBytes = constantBytes;
  return {};
}

}  // namespace sable::hal
