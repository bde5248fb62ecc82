// The sable-npu driver's cache blobs (docs/cache.md) without a device: a round trip keeps every
// byte of the program, and every kind of damage or mismatch is rejected before anything is used —
// each single-byte flip of a small model cache (all offsets) and of a large one (sampled over its
// header, signature and stream), truncation at every length, appended bytes, a foreign or
// damaged data cache, swapped blobs, another token, driver version, hardware or key. The stream
// is the firmware's to verify (with its signature, which the signed part holds): "accepted" here
// is the driver's checks and the firmware's signature check together; the firmware's own is tested
// through the HAL in tests/runtime/npu_cache_hal_test.cc.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sable/hal/npu_cache.h"
#include "sable/runtime/builtin_models.h"
#include "sable/umd/compiler/compiler.h"

namespace sable::hal {
namespace {

namespace fs = std::filesystem;

const sable_hw_config& s16() { return sable_hw_configs[SABLE_HW_CONFIG_S16]; }

umd::compiler::CompiledProgram compile(std::string_view name) {
  auto model = runtime::makeBuiltinModel(name);
  EXPECT_TRUE(model.ok());
  auto program = umd::compiler::compileModel(*model, s16());
  EXPECT_TRUE(program.ok()) << (program.ok() ? "" : program.error().message);
  return std::move(*program);
}

class NpuCache : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / fmt::format("sable-cache-test-{}", ::getpid());
    fs::remove_all(dir_);
    key_ = std::make_unique<umd::SigningKey>(*umd::SigningKey::loadOrCreate(dir_ / "a"));
    other_ = std::make_unique<umd::SigningKey>(*umd::SigningKey::loadOrCreate(dir_ / "b"));
    tiny_ = compile("tiny_cnn");
    tinyModel_ = *runtime::makeBuiltinModel("tiny_cnn");
  }
  static void TearDownTestSuite() {
    key_.reset();
    other_.reset();
    fs::remove_all(dir_);
  }

  static CacheToken token(uint8_t seed) {
    CacheToken t{};
    for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<uint8_t>(seed + 7 * i);
    return t;
  }
  static CacheIdentity identity() { return {"sable-npu-test-1", hardwareConfigIdentity(s16())}; }
  static CacheBlobs write(const umd::compiler::CompiledProgram& program, const Model& model, const CacheToken& t,
                          const umd::SigningKey& key = *key_,
                          std::optional<std::span<const uint8_t>> constants = std::nullopt) {
    auto blobs = writeCacheBlobs(program, modelInterface(model), t, identity(), key, nullptr, constants);
    EXPECT_TRUE(blobs.ok()) << blobs.error().message;
    return blobs.ok() ? std::move(*blobs) : CacheBlobs{};
  }
  static CacheBlobs tinyBlobs() { return write(tiny_, tinyModel_, token(1)); }
  // The driver's checks, then the firmware's check of the stream's signature.
  static Result<CachedProgram> read(const CacheBlobs& b, const CacheToken& t = token(1),
                                    const CacheIdentity& id = identity(), const umd::SigningKey& key = *key_) {
    auto cached = readCacheBlobs(b.model, b.data, t, id, key);
    if (cached.ok() && !crypto::verifyStreamSignature(key.publicKey(), cached->program.stream, cached->streamSignature)) {
      return generalFailure("the firmware would refuse the stream: BAD_SIGNATURE");
    }
    return cached;
  }
  // Where the model cache's signature is: its header says how many bytes it signs.
  static size_t signedBytes(const CacheBlobs& b) {
    return size_t{b.model[12]} | size_t{b.model[13]} << 8 | size_t{b.model[14]} << 16 | size_t{b.model[15]} << 24;
  }

  static inline fs::path dir_;
  static inline std::unique_ptr<umd::SigningKey> key_, other_;
  static inline umd::compiler::CompiledProgram tiny_;
  static inline Model tinyModel_;
};

TEST_F(NpuCache, RoundTripKeepsTheProgramAndTheModelsInterface) {
  const CacheBlobs blobs = tinyBlobs();
  auto cached = read(blobs);
  ASSERT_TRUE(cached.ok()) << cached.error().message;
  const auto& p = cached->program;
  EXPECT_EQ(p.stream, tiny_.stream);
  // The constants are not copied: they are used where they lie in the data cache, aligned.
  EXPECT_TRUE(p.constants.empty());
  EXPECT_EQ(cached->constantsOffset % 64, 0u);
  ASSERT_EQ(cached->constantsOffset + cached->constantsBytes, blobs.data.size());
  EXPECT_TRUE(std::ranges::equal(std::span(blobs.data).subspan(cached->constantsOffset), tiny_.constants));
  // The stream's signature for the firmware is kept, made with the driver's key.
  EXPECT_TRUE(crypto::verifyStreamSignature(key_->publicKey(), p.stream, cached->streamSignature));
  EXPECT_EQ(p.inputBytes, tiny_.inputBytes);
  EXPECT_EQ(p.outputBytes, tiny_.outputBytes);
  EXPECT_EQ(p.scratchBytes, tiny_.scratchBytes);
  EXPECT_EQ(p.scratchRegion, tiny_.scratchRegion);
  EXPECT_EQ(p.constantRegion, tiny_.constantRegion);
  EXPECT_EQ(p.regionCount, tiny_.regionCount);
  const Model& m = cached->interface;
  ASSERT_EQ(m.main.inputIndexes.size(), tinyModel_.main.inputIndexes.size());
  ASSERT_EQ(m.main.outputIndexes.size(), tinyModel_.main.outputIndexes.size());
  for (size_t i = 0; i < m.main.inputIndexes.size(); ++i) {
    const Operand& a = m.main.operands[m.main.inputIndexes[i]];
    const Operand& b = tinyModel_.main.operands[tinyModel_.main.inputIndexes[i]];
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.dimensions, b.dimensions);
    EXPECT_EQ(a.scale, b.scale);
    EXPECT_EQ(a.zeroPoint, b.zeroPoint);
  }
  EXPECT_TRUE(m.main.operations.empty());
  // The weights are in the data cache only; the model cache holds the stream once, at its end.
  EXPECT_GE(blobs.data.size(), tiny_.constants.size());
  EXPECT_LT(blobs.model.size(), tiny_.stream.size() + 1024);
  EXPECT_EQ(signedBytes(blobs) + crypto::kSignatureBytes + tiny_.stream.size(), blobs.model.size());
  EXPECT_TRUE(std::equal(tiny_.stream.begin(), tiny_.stream.end(), blobs.model.end() - tiny_.stream.size()));
  // Saved twice, the same bytes (the data cache's salt is derived from it, not random).
  const CacheBlobs again = tinyBlobs();
  EXPECT_EQ(again.model, blobs.model);
  EXPECT_EQ(again.data, blobs.data);
}

// The driver checks the model cache's signed part and leaves the stream after it to the firmware,
// which checks it with the stream's signature (held in the signed part) before anything else:
// a damaged stream passes the driver and fails there; a stream signature that is not the stream's
// cannot be put in without breaking the model cache's signature.
TEST_F(NpuCache, TheStreamIsTheFirmwaresToVerifyAndItsSignatureIsSigned) {
  const CacheBlobs blobs = tinyBlobs();
  CacheBlobs bad = blobs;
  bad.model.back() ^= 0x01;
  auto cached = readCacheBlobs(bad.model, bad.data, token(1), identity(), *key_);
  ASSERT_TRUE(cached.ok()) << "the driver does not parse or verify the stream: " << cached.error().message;
  EXPECT_FALSE(crypto::verifyStreamSignature(key_->publicKey(), cached->program.stream, cached->streamSignature));
  const size_t streamSignatureAt = signedBytes(blobs) - crypto::kSignatureBytes;
  for (size_t i = streamSignatureAt; i < signedBytes(blobs); ++i) {
    bad = blobs;
    bad.model[i] ^= 0x80;
    EXPECT_FALSE(readCacheBlobs(bad.model, bad.data, token(1), identity(), *key_).ok()) << "stream signature byte " << i;
  }
}

TEST_F(NpuCache, EverySingleByteFlipOfASmallModelCacheIsRejected) {
  const CacheBlobs blobs = tinyBlobs();
  for (size_t i = 0; i < blobs.model.size(); ++i) {
    CacheBlobs bad = blobs;
    bad.model[i] ^= static_cast<uint8_t>(1u << (i % 8));
    auto r = read(bad);
    ASSERT_FALSE(r.ok()) << "byte " << i << " of " << blobs.model.size() << " flipped and accepted";
    EXPECT_EQ(r.error().status, ErrorStatus::GENERAL_FAILURE);
  }
}

TEST_F(NpuCache, TruncationAtEveryLengthAndAppendedBytesAreRejected) {
  const CacheBlobs blobs = tinyBlobs();
  for (size_t n = 0; n < blobs.model.size(); ++n) {
    CacheBlobs bad = blobs;
    bad.model.resize(n);
    ASSERT_FALSE(read(bad).ok()) << "model cache truncated to " << n << " bytes and accepted";
  }
  for (size_t extra : {1u, 7u, 64u, 4096u}) {
    CacheBlobs bad = blobs;
    bad.model.insert(bad.model.end(), extra, 0);
    EXPECT_FALSE(read(bad).ok()) << extra << " bytes appended to the model cache";
    bad = blobs;
    bad.data.insert(bad.data.end(), extra, 0);
    EXPECT_FALSE(read(bad).ok()) << extra << " bytes appended to the data cache";
  }
  for (size_t n = 0; n < blobs.data.size(); n += std::max<size_t>(1, blobs.data.size() / 97)) {
    CacheBlobs bad = blobs;
    bad.data.resize(n);
    ASSERT_FALSE(read(bad).ok()) << "data cache truncated to " << n << " bytes and accepted";
  }
}

TEST_F(NpuCache, ADamagedForeignOrSwappedDataCacheIsRejected) {
  const CacheBlobs blobs = tinyBlobs();
  for (size_t i = 0; i < blobs.data.size(); i += std::max<size_t>(1, blobs.data.size() / 211)) {
    CacheBlobs bad = blobs;
    bad.data[i] ^= 0x40;
    ASSERT_FALSE(read(bad).ok()) << "data cache byte " << i << " flipped and accepted";
  }
  const auto other = compile("conv_bench");
  const CacheBlobs foreign = write(other, *runtime::makeBuiltinModel("conv_bench"), token(1));
  ASSERT_TRUE(read(foreign).ok());
  EXPECT_FALSE(read({blobs.model, foreign.data}).ok()) << "another model's data cache";
  EXPECT_FALSE(read({blobs.data, blobs.model}).ok()) << "model and data cache swapped";
  EXPECT_FALSE(read({blobs.model, blobs.model}).ok()) << "the model cache as both";
}

// The data cache's digest is a tree over 256 KiB leaves, each authenticated under the data cache's
// key (docs/cache.md): a damaged byte in any leaf, two leaves swapped, a leaf dropped or one
// appended are all caught.
TEST_F(NpuCache, EveryLeafOfADataCacheOfManyLeavesIsCheckedAndLeavesKeepTheirPlace) {
  constexpr size_t kLeaf = size_t{256} << 10;
  // tiny_cnn's program with 5.2 leaves of weights (the loader does not look inside them).
  std::vector<uint8_t> weights(5 * kLeaf + kLeaf / 5);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  const CacheBlobs blobs = write(tiny_, tinyModel_, token(9), *key_, weights);
  auto cached = read(blobs, token(9));
  ASSERT_TRUE(cached.ok()) << cached.error().message;
  EXPECT_TRUE(std::ranges::equal(std::span(blobs.data).subspan(cached->constantsOffset), weights));
  const size_t n = blobs.data.size();
  for (size_t leaf = 0; leaf * kLeaf < n; ++leaf) {
    for (size_t at : {leaf * kLeaf, leaf * kLeaf + kLeaf / 2, std::min(n, (leaf + 1) * kLeaf) - 1}) {
      if (at >= n) continue;
      CacheBlobs bad = blobs;
      bad.data[at] ^= 0x08;
      ASSERT_FALSE(read(bad, token(9)).ok()) << "data cache byte " << at << " (leaf " << leaf << ") flipped";
    }
  }
  CacheBlobs swapped = blobs;
  std::swap_ranges(swapped.data.begin() + kLeaf, swapped.data.begin() + 2 * kLeaf, swapped.data.begin() + 2 * kLeaf);
  ASSERT_NE(swapped.data, blobs.data);
  EXPECT_FALSE(read(swapped, token(9)).ok()) << "two leaves swapped";
  CacheBlobs dropped = blobs;
  dropped.data.erase(dropped.data.begin() + kLeaf, dropped.data.begin() + 2 * kLeaf);
  EXPECT_FALSE(read(dropped, token(9)).ok()) << "a leaf dropped";
  CacheBlobs appended = blobs;
  appended.data.insert(appended.data.end(), blobs.data.begin(), blobs.data.begin() + kLeaf);
  EXPECT_FALSE(read(appended, token(9)).ok()) << "a leaf appended";
  const umd::Secret dataKey = dataCacheKey(*key_, dataCacheSalt(blobs.data));
  auto mac = [&](std::span<const uint8_t> bytes, const umd::Secret& k) {
    auto digest = digestDataCache(bytes, k);
    EXPECT_TRUE(digest.ok());
    return digest.ok() ? digest->mac : std::array<uint8_t, 32>{};
  };
  EXPECT_NE(mac(std::span(blobs.data).first(kLeaf), dataKey), mac(std::span(blobs.data).first(kLeaf + 1), dataKey));
  EXPECT_EQ(mac(blobs.data, dataKey), mac(blobs.data, dataKey)) << "the two threads' split changes nothing";
  // Keyed: another driver's key, or another salt, gives another digest of the same bytes.
  EXPECT_NE(mac(blobs.data, dataKey), mac(blobs.data, dataCacheKey(*other_, dataCacheSalt(blobs.data))));
  EXPECT_NE(mac(blobs.data, dataKey), mac(blobs.data, dataCacheKey(*key_, dataCacheSalt(weights))));
}

TEST_F(NpuCache, AnotherTokenDriverVersionHardwareOrKeyIsRejected) {
  const CacheBlobs blobs = tinyBlobs();
  auto wrongToken = read(blobs, token(2));
  ASSERT_FALSE(wrongToken.ok());
  EXPECT_NE(wrongToken.error().message.find("token"), std::string::npos) << wrongToken.error().message;
  auto version = read(blobs, token(1), {"sable-npu-test-2", identity().hardwareConfig});
  ASSERT_FALSE(version.ok());
  EXPECT_NE(version.error().message.find("driver"), std::string::npos) << version.error().message;
  auto hardware = read(blobs, token(1), {identity().driverVersion, hardwareConfigIdentity(sable_hw_configs[SABLE_HW_CONFIG_S8])});
  ASSERT_FALSE(hardware.ok());
  EXPECT_NE(hardware.error().message.find("hardware"), std::string::npos) << hardware.error().message;
  EXPECT_FALSE(read(blobs, token(1), identity(), *other_).ok()) << "verified with another driver's key";
  const CacheBlobs signedByOther = write(tiny_, tinyModel_, token(1), *other_);
  EXPECT_FALSE(read(signedByOther).ok()) << "signed by another key";
}

// A blob of an older format (formats 1 to 3 are signed another way, and their word at byte 12 is
// not the signed part's size) is refused with its version named, never parsed.
TEST_F(NpuCache, ABlobOfAnOlderFormatIsRefusedByItsVersion) {
  CacheBlobs old = tinyBlobs();
  ASSERT_EQ(old.model[8], kModelCacheFormatVersion);
  old.model[8] = 3;
  auto refused = read(old);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("format version 3 (this driver reads 4)"), std::string::npos)
      << refused.error().message;
}

TEST_F(NpuCache, FlipsAcrossALargeModelCacheAreRejected) {
  const auto program = compile("mobilenet_v1");
  const CacheBlobs blobs = write(program, *runtime::makeBuiltinModel("mobilenet_v1"), token(9));
  ASSERT_TRUE(read(blobs, token(9)).ok());
  const size_t n = blobs.model.size(), signature = signedBytes(blobs);
  ASSERT_LT(signature + crypto::kSignatureBytes, n);
  std::vector<size_t> offsets;
  for (size_t i = 0; i < signature; ++i) offsets.push_back(i);  // header and payload
  for (size_t i = signature; i < signature + crypto::kSignatureBytes; ++i) offsets.push_back(i);  // signature
  for (size_t i = signature + crypto::kSignatureBytes; i < n; i += (n - signature) / 509 + 1) offsets.push_back(i);  // stream
  offsets.push_back(n - 1);
  for (size_t i : offsets) {
    CacheBlobs bad = blobs;
    bad.model[i] ^= 0x01;
    ASSERT_FALSE(read(bad, token(9)).ok()) << "byte " << i << " of " << n;
  }
  EXPECT_GT(offsets.size(), 800u);
}

TEST(SigningKey, IsCreatedOwnerOnlyOnceAndRefusedWhenOthersCanReadIt) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("sable-key-test-{}", ::getpid());
  fs::remove_all(dir);
  auto first = umd::SigningKey::loadOrCreate(dir);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(fs::status(dir / "driver.key").permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(fs::status(dir).permissions() & fs::perms::all, fs::perms::owner_all);
  auto again = umd::SigningKey::loadOrCreate(dir);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->publicKey(), first->publicKey()) << "a second load creates no new key";
  std::string error;
  auto published = crypto::readPublicKey(dir / "driver.pub", error);
  ASSERT_TRUE(published.has_value()) << error;
  EXPECT_EQ(*published, first->publicKey());
  const std::vector<uint8_t> message = {1, 2, 3};
  EXPECT_TRUE(crypto::verifySignature(first->publicKey(), message, first->sign(message)));
  fs::permissions(dir / "driver.key", fs::perms::group_read, fs::perm_options::add);
  auto exposed = umd::SigningKey::loadOrCreate(dir);
  ASSERT_FALSE(exposed.ok());
  EXPECT_NE(exposed.error().message.find("0600"), std::string::npos) << exposed.error().message;
  fs::remove_all(dir);
}

TEST(SigningKey, ConcurrentFirstUsesEndWithOneKey) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("sable-key-race-{}", ::getpid());
  fs::remove_all(dir);
  std::vector<std::thread> threads;
  std::vector<crypto::PublicKey> keys(8);
  for (size_t i = 0; i < keys.size(); ++i) {
    threads.emplace_back([&, i] {
      auto key = umd::SigningKey::loadOrCreate(dir);
      if (key.ok()) keys[i] = key->publicKey();
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& k : keys) EXPECT_EQ(k, keys[0]);
  EXPECT_NE(keys[0], crypto::PublicKey{});
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sable::hal
