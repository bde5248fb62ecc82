// Compilation caching of the sable-npu driver through its NN HAL interfaces, in the style of the
// NN HAL's compilation-caching tests (docs/cache.md): save then load gives bit-identical outputs;
// wrong handles, tokens, damaged or foreign files are rejected with the HAL's statuses; the
// 1.2-era calls; concurrent saves and loads of one token, and a client rewriting the files while
// the driver loads them.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "npu_hal_support.h"
#include "sable/hal/npu_cache.h"
#include "sable/hal/unique_fd.h"
#include "sable/runtime/corpus.h"
#include "sable/umd/compiler/compiler.h"
#include "sable/umd/device.h"
#include "sable/umd/signing.h"

namespace sable::runtime {
namespace {

namespace fs = std::filesystem;

// A cache file in the suite's temporary directory, open for reading and writing.
class CacheFile {
 public:
  CacheFile(const fs::path& path, int flags = O_RDWR) : path_(path) {
    fd_.reset(::open(path.c_str(), O_CREAT | O_CLOEXEC | flags, 0600));
  }
  int fd() const { return fd_.get(); }
  hal::NativeHandle handle() const { return {{fd_.get()}}; }
  std::vector<hal::NativeHandle> handles() const { return {handle()}; }
  std::vector<uint8_t> bytes() const {
    std::vector<uint8_t> out(fs::file_size(path_));
    EXPECT_EQ(::pread(fd_.get(), out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
    return out;
  }
  void write(const std::vector<uint8_t>& bytes) const {
    ASSERT_EQ(::ftruncate(fd_.get(), 0), 0);
    ASSERT_EQ(::pwrite(fd_.get(), bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  }

 private:
  fs::path path_;
  hal::UniqueFd fd_;
};

class NpuCaching : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = npu();
    if (!device_) GTEST_SKIP() << "sable-simd is not built: no NPU to test on";
    dir_ = fs::temp_directory_path() / fmt::format("sable-caching-{}-{}", ::getpid(),
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  CacheFile file(const std::string& name, int flags = O_RDWR) const { return CacheFile(dir_ / name, flags); }

  static hal::CacheToken token(uint8_t seed) {
    hal::CacheToken t{};
    for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<uint8_t>(seed * 31 + i);
    return t;
  }

  // prepareModel_1_3 with the cache files: the preparation must succeed (saving or not).
  std::shared_ptr<hal::IPreparedModel> prepareAndSave(const hal::Model& model, const CacheFile& modelCache,
                                                      const CacheFile& dataCache, const hal::CacheToken& t) {
    auto callback = std::make_shared<hal::PreparedModelCallback>();
    EXPECT_EQ(device_->prepareModel_1_3(model, hal::ExecutionPreference::FAST_SINGLE_ANSWER, hal::Priority::MEDIUM,
                                        {}, modelCache.handles(), dataCache.handles(), t, callback),
              ErrorStatus::NONE);
    callback->wait();
    EXPECT_EQ(callback->status(), ErrorStatus::NONE) << callback->message();
    return callback->preparedModel();
  }

  struct Loaded {
    ErrorStatus returned = ErrorStatus::NONE;
    ErrorStatus notified = ErrorStatus::NONE;
    std::string message;
    std::shared_ptr<hal::IPreparedModel> prepared;
  };
  Loaded load(const std::vector<hal::NativeHandle>& modelCache, const std::vector<hal::NativeHandle>& dataCache,
              const hal::CacheToken& t) {
    auto callback = std::make_shared<hal::PreparedModelCallback>();
    Loaded out;
    out.returned = device_->prepareModelFromCache_1_3({}, modelCache, dataCache, t, callback);
    callback->wait();
    EXPECT_EQ(callback->notifications(), 1);
    out.notified = callback->status();
    out.message = callback->message();
    out.prepared = callback->preparedModel();
    return out;
  }
  Loaded load(const CacheFile& modelCache, const CacheFile& dataCache, const hal::CacheToken& t) {
    return load(modelCache.handles(), dataCache.handles(), t);
  }

  // Output 0 of `prepared` for these inputs (empty on failure, which the caller's comparison shows).
  static std::vector<uint8_t> run(hal::IPreparedModel& prepared, const hal::Model& model,
                                  const std::vector<std::vector<uint8_t>>& inputs) {
    TestRequest r = makeRequest(model, inputs);
    auto result = prepared.executeSynchronously_1_3(r.request, hal::MeasureTiming::NO, {}, {});
    EXPECT_EQ(result.status, ErrorStatus::NONE) << result.message;
    return result.status == ErrorStatus::NONE ? r.output(0) : std::vector<uint8_t>{};
  }

  // Saves `model`, loads it back and checks that both prepared models compute the same bytes,
  // the CPU reference's.
  void checkRoundTrip(const hal::Model& model, const std::string& what, uint8_t seed) {
    CacheFile m = file(what + ".model"), d = file(what + ".data");
    auto fresh = prepareAndSave(model, m, d, token(seed));
    ASSERT_TRUE(fresh) << what;
    ASSERT_GT(m.bytes().size(), 0u) << what << ": nothing was saved";
    Loaded cached = load(m, d, token(seed));
    ASSERT_EQ(cached.notified, ErrorStatus::NONE) << what << ": " << cached.message;
    ASSERT_TRUE(cached.prepared);
    const auto inputs = randomInputs(model, seed);
    const auto expected = reference(model, inputs);
    EXPECT_EQ(run(*fresh, model, inputs), expected) << what << ": freshly compiled";
    EXPECT_EQ(run(*cached.prepared, model, inputs), expected) << what << ": loaded from the cache";
  }

  std::shared_ptr<hal::IDevice> device_;
  fs::path dir_;
};

TEST_F(NpuCaching, TheDriverAsksForOneModelAndOneDataCacheFile) {
  EXPECT_EQ(device_->getNumberOfCacheFilesNeeded().value.numModelCache, 1u);
  EXPECT_EQ(device_->getNumberOfCacheFilesNeeded().value.numDataCache, 1u);
  EXPECT_TRUE(device_->isCachingSupported().value);
}

TEST_F(NpuCaching, SaveThenLoadGivesIdenticalOutputs) {
  checkRoundTrip(addModel(), "add", 1);
  checkRoundTrip(*makeBuiltinModel("tiny_cnn"), "tiny_cnn", 2);
  checkRoundTrip(*makeBuiltinModel("conv_bench"), "conv_bench", 3);
}

TEST_F(NpuCaching, SaveThenLoadGivesIdenticalOutputsForBothMobileNets) {
  checkRoundTrip(*makeBuiltinModel("mobilenet_v1"), "mobilenet_v1", 4);
  checkRoundTrip(*makeBuiltinModel("mobilenet_v2"), "mobilenet_v2", 5);
}

// The corpus's models that the NPU supports entirely (every 4th of them, in corpus order, to keep
// the default suite short): the cached prepared model computes the same bytes as the fresh one.
TEST_F(NpuCaching, CorpusModelsTheNpuSupportsGiveIdenticalOutputsFromTheCache) {
  const char* shared = std::getenv("SABLE_SHARED_DIR");
  if (shared == nullptr || !fs::exists(fs::path(shared) / "corpus")) {
    GTEST_SKIP() << "no conformance corpus (../shared/corpus or $SABLE_SHARED_DIR): skipped";
  }
  auto files = findCorpusFiles({(fs::path(shared) / "corpus").string()});
  ASSERT_TRUE(files.ok()) << files.error().message;
  size_t supported = 0, checked = 0;
  for (const auto& path : *files) {
    auto reader = CorpusReader::open(path);
    ASSERT_TRUE(reader.ok());
    while (auto parsed = reader->next()) {
      if (!parsed->ok() || (*parsed)->expectFailure) continue;
      const CorpusTest& test = **parsed;
      auto flags = device_->getSupportedOperations_1_3(test.model);
      if (flags.status != ErrorStatus::NONE || flags.value.empty() ||
          std::find(flags.value.begin(), flags.value.end(), false) != flags.value.end()) {
        continue;
      }
      if (supported++ % 4 != 0) continue;
      const std::string what = fmt::format("{}#{}", path.filename().string(), test.name);
      CacheFile m = file("m", O_RDWR | O_TRUNC), d = file("d", O_RDWR | O_TRUNC);
      const hal::CacheToken t = token(static_cast<uint8_t>(supported));  // one token per model
      auto callback = std::make_shared<hal::PreparedModelCallback>();
      device_->prepareModel_1_3(test.model, hal::ExecutionPreference::FAST_SINGLE_ANSWER, hal::Priority::MEDIUM, {},
                                m.handles(), d.handles(), t, callback);
      callback->wait();
      if (callback->status() != ErrorStatus::NONE) continue;  // the conformance suite judges preparation
      auto fresh = callback->preparedModel();
      if (m.bytes().empty()) continue;  // weights given as inputs: compiled per execution, not cached
      const Loaded cached = load(m, d, t);
      ASSERT_EQ(cached.notified, ErrorStatus::NONE) << what << ": " << cached.message;
      auto a = buildCorpusRequest(test), b = buildCorpusRequest(test);
      ASSERT_TRUE(a.ok() && b.ok()) << what;
      const auto ra = fresh->executeSynchronously_1_3(a->request, hal::MeasureTiming::NO, {}, {});
      const auto rb = cached.prepared->executeSynchronously_1_3(b->request, hal::MeasureTiming::NO, {}, {});
      ASSERT_EQ(ra.status, rb.status) << what << ": " << ra.message << " / " << rb.message;
      for (size_t i = 0; i < test.outputs.size() && ra.status == ErrorStatus::NONE; ++i) {
        const auto x = outputBytes(*a, i), y = outputBytes(*b, i);
        ASSERT_TRUE(std::equal(x.begin(), x.end(), y.begin(), y.end())) << what << ": output " << i;
      }
      ++checked;
    }
  }
  std::printf("%zu corpus tests run entirely on the NPU; %zu saved, loaded and compared\n", supported, checked);
  EXPECT_GT(checked, 20u) << "too few corpus models were checked for the test to mean anything";
}

TEST_F(NpuCaching, FilesOfAnySizeAndOffsetAreTruncatedAndRewritten) {
  CacheFile m = file("m"), d = file("d");
  m.write(std::vector<uint8_t>(100000, 0xAB));  // larger than the blob, and the offset moved
  d.write(std::vector<uint8_t>(7, 0xCD));
  ASSERT_EQ(::lseek(m.fd(), 5000, SEEK_SET), 5000);
  ASSERT_EQ(::lseek(d.fd(), 3, SEEK_SET), 3);
  ASSERT_TRUE(prepareAndSave(addModel(), m, d, token(6)));
  EXPECT_LT(m.bytes().size(), 100000u);
  // Reading uses offset 0 whatever the descriptor's offset is.
  ASSERT_EQ(::lseek(m.fd(), 77, SEEK_SET), 77);
  const Loaded cached = load(m, d, token(6));
  EXPECT_EQ(cached.notified, ErrorStatus::NONE) << cached.message;
}

TEST_F(NpuCaching, WrongNumbersOfHandlesAreInvalidArguments) {
  CacheFile m = file("m"), d = file("d"), extra = file("x");
  ASSERT_TRUE(prepareAndSave(addModel(), m, d, token(7)));
  for (const auto& [models, datas, what] :
       std::vector<std::tuple<std::vector<hal::NativeHandle>, std::vector<hal::NativeHandle>, std::string>>{
           {{}, d.handles(), "no model cache"},
           {m.handles(), {}, "no data cache"},
           {{m.handle(), extra.handle()}, d.handles(), "two model caches"},
           {m.handles(), {d.handle(), extra.handle()}, "two data caches"},
           {{hal::NativeHandle{{m.fd(), d.fd()}}}, d.handles(), "a handle of two descriptors"},
           {{hal::NativeHandle{{-1}}}, d.handles(), "a negative descriptor"},
           {{hal::NativeHandle{{}}}, d.handles(), "a handle of no descriptor"}}) {
    const Loaded l = load(models, datas, token(7));
    EXPECT_EQ(l.returned, ErrorStatus::INVALID_ARGUMENT) << what;
    EXPECT_EQ(l.notified, ErrorStatus::INVALID_ARGUMENT) << what;
    EXPECT_FALSE(l.prepared) << what;
  }
  // And at preparation: a wrong count is invalid too (an empty vector means no caching).
  auto callback = std::make_shared<hal::PreparedModelCallback>();
  EXPECT_EQ(device_->prepareModel_1_3(addModel(), hal::ExecutionPreference::FAST_SINGLE_ANSWER,
                                      hal::Priority::MEDIUM, {}, {m.handle(), extra.handle()}, d.handles(), token(7),
                                      callback),
            ErrorStatus::INVALID_ARGUMENT);
  callback->wait();
  EXPECT_EQ(callback->status(), ErrorStatus::INVALID_ARGUMENT);
}

TEST_F(NpuCaching, UnreadableWrongTokenDamagedAndForeignCachesAreGeneralFailures) {
  CacheFile m = file("m"), d = file("d");
  ASSERT_TRUE(prepareAndSave(addModel(), m, d, token(8)));
  CacheFile m2 = file("m2"), d2 = file("d2");
  ASSERT_TRUE(prepareAndSave(*makeBuiltinModel("tiny_cnn"), m2, d2, token(8)));
  ASSERT_EQ(load(m, d, token(8)).notified, ErrorStatus::NONE);

  auto expectRejected = [&](const Loaded& l, const std::string& what) {
    EXPECT_EQ(l.notified, ErrorStatus::GENERAL_FAILURE) << what << ": " << l.message;
    EXPECT_FALSE(l.prepared) << what;
  };
  expectRejected(load(m, d, token(9)), "another token");
  expectRejected(load(m, d2, token(8)), "another model's data cache");
  expectRejected(load(d, m, token(8)), "the files swapped");
  CacheFile writeOnly(dir_ / "m", O_WRONLY);
  expectRejected(load(writeOnly.handles(), d.handles(), token(8)), "a write-only model cache descriptor");
  // A directory is not a cache file.
  hal::UniqueFd directory(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  expectRejected(load({hal::NativeHandle{{directory.get()}}}, d.handles(), token(8)), "a directory");
  const std::vector<uint8_t> good = m.bytes();
  // The signed part (the driver refuses it), its signature, and the stream after it (the
  // firmware refuses it: the stream's signature is in the signed part).
  const size_t signedBytes = size_t{good[12]} | size_t{good[13]} << 8 | size_t{good[14]} << 16 | size_t{good[15]} << 24;
  ASSERT_LT(signedBytes + crypto::kSignatureBytes, good.size());
  for (size_t i : {size_t{0}, signedBytes / 2, signedBytes - 1, signedBytes + 1, good.size() - 1,
                   (signedBytes + good.size()) / 2}) {
    auto bad = good;
    bad[i] ^= 0x10;
    m.write(bad);
    const Loaded l = load(m, d, token(8));
    expectRejected(l, fmt::format("byte {} flipped", i));
    if (i > signedBytes + crypto::kSignatureBytes) {
      EXPECT_NE(l.message.find("BAD_SIGNATURE"), std::string::npos) << "stream byte " << i << ": " << l.message;
    }
  }
  m.write(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(good.size() / 3)));
  expectRejected(load(m, d, token(8)), "truncated");
  m.write({});
  expectRejected(load(m, d, token(8)), "empty");
  m.write(good);
  EXPECT_EQ(load(m, d, token(8)).notified, ErrorStatus::NONE) << "the restored file loads again";
}

// The data cache is read straight into the buffer object of the program's constants and
// verified there: damage anywhere, a shorter or a longer file are still rejected.
TEST_F(NpuCaching, ADamagedShortOrLongDataCacheIsRejectedWhereItIsRead) {
  const hal::Model model = *makeBuiltinModel("tiny_cnn");
  CacheFile m = file("m"), d = file("d");
  ASSERT_TRUE(prepareAndSave(model, m, d, token(15)));
  const std::vector<uint8_t> good = d.bytes();
  ASSERT_GT(good.size(), hal::kDataCacheHeaderBytes);
  auto expectRejected = [&](const std::vector<uint8_t>& bytes, const std::string& what) {
    d.write(bytes);
    const Loaded l = load(m, d, token(15));
    EXPECT_EQ(l.notified, ErrorStatus::GENERAL_FAILURE) << what << ": " << l.message;
    EXPECT_FALSE(l.prepared) << what;
  };
  for (size_t i : {size_t{0}, size_t{20}, size_t{hal::kDataCacheHeaderBytes}, good.size() / 2, good.size() - 1}) {
    auto bad = good;
    bad[i] ^= 0x20;
    expectRejected(bad, fmt::format("data cache byte {} flipped", i));
  }
  expectRejected(std::vector<uint8_t>(good.begin(), good.end() - 1), "the last byte missing");
  expectRejected(std::vector<uint8_t>(good.begin(), good.begin() + hal::kDataCacheHeaderBytes), "the header only");
  auto longer = good;
  longer.push_back(0);
  expectRejected(longer, "a byte appended");
  expectRejected({}, "empty");
  d.write(good);
  const Loaded l = load(m, d, token(15));
  ASSERT_EQ(l.notified, ErrorStatus::NONE) << "the restored file loads again: " << l.message;
  const auto inputs = randomInputs(model, 15);
  EXPECT_EQ(run(*l.prepared, model, inputs), reference(model, inputs));
}

// The driver creates the buffer object of a load while it verifies the model cache, from sizes
// the blob's header implies: whatever is wrong with the blobs, a rejected load gives every byte
// of device memory back (and nothing stays registered).
TEST_F(NpuCaching, ARejectedLoadLeavesNoDeviceMemoryBehind) {
  const char* name = std::getenv("SABLE_DEVICE");
  ASSERT_NE(name, nullptr) << "the test device sets SABLE_DEVICE";
  const hal::Model model = *makeBuiltinModel("tiny_cnn");
  CacheFile m = file("m"), d = file("d");
  ASSERT_TRUE(prepareAndSave(model, m, d, token(21)));  // the first use starts the device's server
  auto observer = umd::Device::open({.name = name, .spawn = false});
  ASSERT_TRUE(observer.ok()) << observer.error().message;
  const std::vector<uint8_t> goodModel = m.bytes(), goodData = d.bytes();
  const size_t signedBytes = size_t{goodModel[12]} | size_t{goodModel[13]} << 8 | size_t{goodModel[14]} << 16 |
                             size_t{goodModel[15]} << 24;
  auto freeBytes = [&] {
    auto info = observer->queryInfo();
    EXPECT_TRUE(info.ok());
    return info.ok() ? info->device_memory_free : 0;
  };
  // The compiled model above goes on the HAL's preparation thread, which may still hold it for a
  // moment after its callback: wait until the device's free memory no longer changes.
  uint64_t before = freeBytes();
  for (int i = 0; i < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const uint64_t now = freeBytes();
    if (now == before) break;
    before = now;
  }
  auto expectRejected = [&](const std::vector<uint8_t>& modelBlob, const std::vector<uint8_t>& dataBlob,
                            const hal::CacheToken& t, const std::string& what) {
    m.write(modelBlob);
    d.write(dataBlob);
    const Loaded l = load(m, d, t);
    EXPECT_EQ(l.notified, ErrorStatus::GENERAL_FAILURE) << what << ": " << l.message;
    EXPECT_FALSE(l.prepared) << what;
    EXPECT_EQ(freeBytes(), before) << what << ": device memory was not given back";
  };
  expectRejected(goodModel, goodData, token(22), "another token");
  auto flipped = goodModel;
  flipped[signedBytes / 2] ^= 1;
  expectRejected(flipped, goodData, token(21), "a byte of the signed part flipped");
  flipped = goodModel;
  flipped.back() ^= 1;
  expectRejected(flipped, goodData, token(21), "a byte of the stream flipped (the firmware refuses it)");
  auto longer = goodModel;
  longer.insert(longer.end(), 4096, 0);
  expectRejected(longer, goodData, token(21), "4 KiB appended to the model cache");
  auto damaged = goodData;
  damaged[damaged.size() / 2] ^= 1;
  expectRejected(goodModel, damaged, token(21), "a byte of the data cache flipped");
  m.write(goodModel);
  d.write(goodData);
  const Loaded l = load(m, d, token(21));
  ASSERT_EQ(l.notified, ErrorStatus::NONE) << "the restored files load again: " << l.message;
  EXPECT_LT(freeBytes(), before) << "a loaded model holds its device memory";
}

// The stream's signature kept in the model cache spares signing the stream again at load; the
// firmware still verifies it. A model cache signed by the driver's key (so the driver accepts it)
// whose stream signature is another message's, or zeros, is refused by the firmware.
TEST_F(NpuCaching, AStoredStreamSignatureThatDoesNotMatchTheStreamIsRefusedByTheFirmware) {
  const hal::Model model = addModel();
  CacheFile m = file("m"), d = file("d");
  ASSERT_TRUE(prepareAndSave(model, m, d, token(16)));
  auto key = umd::SigningKey::processKey();
  ASSERT_TRUE(key.ok()) << key.error().message;
  const sable_hw_config& s16 = sable_hw_configs[SABLE_HW_CONFIG_S16];
  auto program = umd::compiler::compileModel(model, s16);
  ASSERT_TRUE(program.ok()) << program.error().message;
  const hal::CacheIdentity identity{device_->getVersionString().value, hal::hardwareConfigIdentity(s16)};
  auto blobs = [&](const crypto::Signature* streamSignature) {
    auto written = hal::writeCacheBlobs(*program, hal::modelInterface(model), token(16), identity, **key, streamSignature);
    EXPECT_TRUE(written.ok()) << written.error().message;
    return written.ok() ? std::move(*written) : hal::CacheBlobs{};
  };
  ASSERT_EQ(blobs(nullptr).model, m.bytes()) << "the test's blobs are not the driver's: it would prove nothing";
  const crypto::Signature otherMessage = (*key)->sign(std::vector<uint8_t>{1, 2, 3});
  const crypto::Signature zeros{};
  for (const auto& [signature, what] : {std::pair{&otherMessage, "another message's signature"},
                                        std::pair{&zeros, "a signature of zeros"}}) {
    const hal::CacheBlobs bad = blobs(signature);
    m.write(bad.model);
    d.write(bad.data);
    const Loaded l = load(m, d, token(16));
    EXPECT_EQ(l.notified, ErrorStatus::GENERAL_FAILURE) << what;
    EXPECT_NE(l.message.find("BAD_SIGNATURE"), std::string::npos) << what << ": " << l.message;
    EXPECT_FALSE(l.prepared) << what;
  }
}

// A model prepared from the cache saves it again (its constants read back from their buffer
// object), byte for byte as the compiled model did.
TEST_F(NpuCaching, AModelPreparedFromTheCacheSavesTheSameCacheAgain) {
  const hal::Model model = *makeBuiltinModel("tiny_cnn");
  CacheFile m = file("m"), d = file("d");
  ASSERT_TRUE(prepareAndSave(model, m, d, token(17)));
  const Loaded l = load(m, d, token(17));
  ASSERT_EQ(l.notified, ErrorStatus::NONE) << l.message;
  CacheFile m2 = file("m2"), d2 = file("d2");
  ASSERT_EQ(l.prepared->saveToCache(m2.handles(), d2.handles(), token(17)), ErrorStatus::NONE);
  EXPECT_EQ(m2.bytes(), m.bytes());
  EXPECT_EQ(d2.bytes(), d.bytes());
}

TEST_F(NpuCaching, AModelWhoseWeightsAreInputsPreparesButCannotBeCached) {
  ModelBuilder b;
  const uint32_t in = b.addInput(kQ, {1, 4, 4, 16}, 0.5f, 128);
  const uint32_t filter = b.addInput(kQ, {16, 1, 1, 16}, 0.5f, 128);
  const uint32_t bias = b.addConstant<int32_t>(OperandType::TENSOR_INT32, {16}, std::vector<int32_t>(16, 0), 0.25f);
  const uint32_t out = b.addOutput(kQ, {1, 4, 4, 16}, 1.0f, 128);
  b.addOperation(OperationType::CONV_2D,
                 {in, filter, bias, b.addInt32(0), b.addInt32(0), b.addInt32(0), b.addInt32(0), b.addInt32(1),
                  b.addInt32(1), b.addInt32(0)},
                 {out});
  CacheFile m = file("m"), d = file("d");
  ASSERT_TRUE(prepareAndSave(addModel(), m, d, token(10)));  // another model's cache, same token
  ASSERT_TRUE(prepareAndSave(b.build(), m, d, token(10))) << "a cache that cannot be saved never fails preparation";
  EXPECT_TRUE(m.bytes().empty()) << "the files are emptied rather than left with another model's cache";
  EXPECT_EQ(load(m, d, token(10)).notified, ErrorStatus::GENERAL_FAILURE);
}

TEST_F(NpuCaching, The12EraSaveToCacheValidatesItsFilesAndPrepareModelFromCacheLoadsThem) {
  const hal::Model model = addModel();
  auto prepared = prepare(*device_, model);
  ASSERT_TRUE(prepared);
  CacheFile m = file("m"), d = file("d"), extra = file("x");
  EXPECT_EQ(prepared->saveToCache({}, d.handles(), token(11)), ErrorStatus::INVALID_ARGUMENT);
  EXPECT_EQ(prepared->saveToCache({m.handle(), extra.handle()}, d.handles(), token(11)),
            ErrorStatus::INVALID_ARGUMENT);
  extra.write({1, 2, 3});
  EXPECT_EQ(prepared->saveToCache(m.handles(), extra.handles(), token(11)), ErrorStatus::INVALID_ARGUMENT)
      << "a data cache file that is not empty";
  ASSERT_EQ(::lseek(m.fd(), 16, SEEK_SET), 16);
  EXPECT_EQ(prepared->saveToCache(m.handles(), d.handles(), token(11)), ErrorStatus::INVALID_ARGUMENT)
      << "a model cache descriptor not at offset 0";
  ASSERT_EQ(::lseek(m.fd(), 0, SEEK_SET), 0);
  ASSERT_EQ(prepared->saveToCache(m.handles(), d.handles(), token(11)), ErrorStatus::NONE);

  auto callback = std::make_shared<hal::PreparedModelCallback>();
  ASSERT_EQ(device_->prepareModelFromCache(m.handles(), d.handles(), token(11), callback), ErrorStatus::NONE);
  callback->wait();
  ASSERT_EQ(callback->status(), ErrorStatus::NONE) << callback->message();
  const auto inputs = randomInputs(model, 11);
  EXPECT_EQ(run(*callback->preparedModel(), model, inputs), reference(model, inputs));
}

TEST_F(NpuCaching, ConcurrentSavesAndLoadsOfOneTokenNeverCrashAndLoadCorrectModels) {
  const hal::Model model = addModel();
  const auto inputs = randomInputs(model, 12);
  const auto expected = reference(model, inputs);
  CacheFile m = file("m"), d = file("d");
  ASSERT_TRUE(prepareAndSave(model, m, d, token(12)));
  std::atomic<int> loaded{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 6; ++round) {
        if ((t + round) % 2 == 0) {
          CacheFile mine_m(dir_ / "m"), mine_d(dir_ / "d");
          prepareAndSave(model, mine_m, mine_d, token(12));
        } else {
          const Loaded l = load(m, d, token(12));
          if (l.notified == ErrorStatus::NONE && l.prepared) {
            ++loaded;
            if (run(*l.prepared, model, inputs) != expected) ++wrong;
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(loaded.load(), 0) << "no load succeeded: the test proved nothing";
}

TEST_F(NpuCaching, AClientRewritingTheFilesWhileTheDriverLoadsThemNeverGetsAWrongModel) {
  const hal::Model add = addModel(), other = addModel(0.2f);  // same shapes, different results
  const auto inputs = randomInputs(add, 13);
  const auto expected = reference(add, inputs);
  CacheFile m = file("m"), d = file("d"), om = file("om"), od = file("od");
  ASSERT_TRUE(prepareAndSave(add, m, d, token(13)));
  ASSERT_TRUE(prepareAndSave(other, om, od, token(14)));  // another model has another token
  const auto good = std::pair{m.bytes(), d.bytes()};
  const auto foreign = std::pair{om.bytes(), od.bytes()};
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    // Good files, another model's files, garbage and truncations, in turn.
    for (uint32_t i = 0; !stop; ++i) {
      switch (i % 4) {
        case 0: m.write(good.first); d.write(good.second); break;
        case 1: m.write(foreign.first); d.write(good.second); break;
        case 2: m.write(std::vector<uint8_t>(good.first.begin(), good.first.begin() + static_cast<long>(i % good.first.size()))); break;
        default: d.write(foreign.second); break;
      }
    }
  });
  int loaded = 0;
  for (int round = 0; round < 100; ++round) {
    const Loaded l = load(m, d, token(13));
    if (l.notified == ErrorStatus::NONE && l.prepared) {
      ++loaded;
      ASSERT_EQ(run(*l.prepared, add, inputs), expected) << "round " << round << ": a load gave another model";
    } else {
      EXPECT_EQ(l.notified, ErrorStatus::GENERAL_FAILURE) << l.message;
    }
  }
  stop = true;
  writer.join();
  std::printf("%d of 100 loads succeeded while the files were being rewritten\n", loaded);
}

}  // namespace
}  // namespace sable::runtime
