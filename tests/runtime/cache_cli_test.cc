// `sable compile --cache-dir`, `sable run --cache-dir` and `sable bench --cache`
// (tools/sable/compile_command.cc, model_cache.cc, bench_cache.cc): the CLI as a process with a
// sable-simd of its own writes the signed cache, uses it when valid and says so, recompiles when
// it is damaged, and benchmarks compile against load.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../support/cli_run.h"

namespace {

namespace fs = std::filesystem;
using sable::testing::CliRun;

CliRun runSable(const std::string& arguments) {
  return sable::testing::runSableCli(SABLE_TOOL_PATH, SABLE_SIMD_PATH, arguments,
                                     fmt::format("cache-cli-{}", getpid()));
}

class SableCacheCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("sable-cache-cli-{}", getpid());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(SableCacheCli, CompileWritesTheCacheAndRunUsesItOrRecompilesWhenItIsDamaged) {
  const CliRun compiled = runSable(fmt::format("compile builtin:tiny_cnn --cache-dir {}", dir_.string()));
  ASSERT_EQ(compiled.exitCode, 0) << compiled.out;
  fs::path modelFile;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    if (entry.path().string().ends_with(".model.cache")) modelFile = entry.path();
  }
  ASSERT_FALSE(modelFile.empty()) << compiled.out;
  EXPECT_NE(compiled.out.find(modelFile.string()), std::string::npos) << compiled.out;

  const CliRun cached =
      runSable(fmt::format("run builtin:tiny_cnn --device sable-npu --check --cache-dir {}", dir_.string()));
  ASSERT_EQ(cached.exitCode, 0) << cached.out;
  EXPECT_NE(cached.out.find("prepared from the cache"), std::string::npos) << cached.out;
  EXPECT_NE(cached.out.find("identical to cpu-reference"), std::string::npos) << cached.out;

  {  // one byte of the signed command stream changed: refused, recompiled, and saved again
    std::fstream f(modelFile, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(modelFile) / 2));
    f.put('\x5a');
  }
  const CliRun damaged =
      runSable(fmt::format("run builtin:tiny_cnn --device sable-npu --check --cache-dir {}", dir_.string()));
  ASSERT_EQ(damaged.exitCode, 0) << damaged.out;
  EXPECT_NE(damaged.out.find("not used"), std::string::npos) << damaged.out;
  EXPECT_NE(damaged.out.find("signature"), std::string::npos) << damaged.out;
  EXPECT_NE(damaged.out.find("identical to cpu-reference"), std::string::npos) << damaged.out;
  const CliRun again =
      runSable(fmt::format("run builtin:tiny_cnn --device sable-npu --cache-dir {}", dir_.string()));
  EXPECT_NE(again.out.find("prepared from the cache"), std::string::npos) << "saved again: " << again.out;
}

TEST_F(SableCacheCli, BenchCacheReportsCompileAndLoadTimesAndIdenticalOutputs) {
  const CliRun run = runSable("bench --cache builtin:tiny_cnn");
  ASSERT_EQ(run.exitCode, 0) << run.out;
  EXPECT_NE(run.out.find("builtin:tiny_cnn"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("identical"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("ratio"), std::string::npos) << run.out;
  // Whether the model met the 20x target is said, either way.
  EXPECT_NE(run.out.find("target, a load at least 20x faster than a compilation: met by"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("builtin:tiny_cnn ("), std::string::npos) << run.out;
}

TEST_F(SableCacheCli, CompileForADeviceThatDoesNotCacheIsAUsageError) {
  EXPECT_EQ(runSable(fmt::format("compile builtin:tiny_cnn --device cpu-reference --cache-dir {}", dir_.string()))
                .exitCode,
            2);
}

}  // namespace
