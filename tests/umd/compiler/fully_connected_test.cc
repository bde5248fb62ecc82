// lowerConv for FULLY_CONNECTED (a 1×1 convolution over an [n, 1, 1, c] view) on the simulated
// NPU, bit-exact against the CPU reference: MobileNet's classifier 1024 → 1001, batches (folded
// into the rows the MATMULs stream), and random small cases.
#include "conv_support.h"

namespace sable::umd::compiler::convtest {
namespace {

class LowerFullyConnected : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { device_ = openDevice(&openError_); }
  static void TearDownTestSuite() { device_.reset(); }
  void SetUp() override {
    if (access(SABLE_SIMD_PATH, X_OK) != 0) GTEST_SKIP() << "sable-simd is not built (" SABLE_SIMD_PATH ")";
    ASSERT_NE(device_, nullptr) << "cannot open the device: " << openError_;
  }

  // c.width is the batch, c.inChannels the input size, c.outChannels the units.
  Lowered check(const ConvCase& c, const std::string& what) {
    auto cpu = testing::runOnCpu(devicetest::fullyConnectedModel(c), {c.inputData});
    EXPECT_TRUE(cpu.ok()) << what << ": CPU reference: " << cpu.error().message;
    if (!cpu.ok()) return {};
    ConvCase one = c;  // the layer's view: [batch, 1, 1, c]
    one.width = 1;
    auto lowered = lower(layerOf(one, 1, c.width), c.inputData);
    EXPECT_TRUE(lowered.ok()) << what << ": lowerConv: " << lowered.error().message;
    if (!lowered.ok()) return {};
    const auto balance = tokenBalance(lowered->commands);
    EXPECT_EQ(balance, (std::array<int64_t, SABLE_DEP_CHANNELS>{0, 0, 0, 1}))
        << what << ": the layer must leave exactly one STORE_TO_COMPUTE token";
    EXPECT_EQ(findScratchpadRace(lowered->commands, s16()), "") << what;
    auto npu = runJob(*device_, lowered->job);
    EXPECT_TRUE(npu.ok()) << what << ": NPU: " << npu.error().message;
    if (!npu.ok()) return {};
    const auto actual = gather(npu->outputs[0], c.width, c.outChannels, c.outChannels, 0);
    EXPECT_EQ(compareBytes((*cpu)[0].bytes, actual), "") << what;
    for (uint8_t v : (*cpu)[0].bytes) distinct_[v] = true;
    return std::move(*lowered);
  }

  void TearDown() override {
    const auto values = std::count(std::begin(distinct_), std::end(distinct_), true);
    EXPECT_GE(values, 32) << "the cases produced only " << values << " distinct output values";
  }

  static inline std::unique_ptr<umd::Device> device_;
  static inline std::string openError_;
  bool distinct_[256] = {};
};

ConvCase fc(uint32_t batch, uint32_t in, uint32_t out) {
  ConvCase c;
  c.height = 1;
  c.width = batch;
  c.inChannels = in;
  c.outChannels = out;
  return c;
}

// MobileNet v1's classifier: 1×1×1024 → 1001 (1 MiB of weights, streamed per output block).
TEST_F(LowerFullyConnected, MobileNetClassifier) {
  Generator gen(31);
  ConvCase c = fc(1, 1024, 1001);
  gen.fill(c, false, false);
  const Lowered l = check(c, "1024 → 1001");
  EXPECT_EQ(l.stats.macs, uint64_t{1024} * 1001);
  EXPECT_EQ(l.stats.dramBytesWritten, 1001u);
  EXPECT_GE(l.stats.constantBytes, uint64_t{1024} * 1001) << "every weight is in the constant pool";
}

TEST_F(LowerFullyConnected, BatchSigned) {
  Generator gen(32);
  ConvCase c = fc(40, 300, 70);
  gen.fill(c, true, false);
  check(c, "batch 40, 300 → 70, int8");
}

TEST_F(LowerFullyConnected, RandomSmallCases) {
  Generator gen(33);
  for (int i = 0; i < 12; ++i) {
    ConvCase c = fc(gen.uniform(1, 20), gen.uniform(1, 70), gen.uniform(1, 50));
    gen.fill(c, gen.coin(), false);  // NNAPI FULLY_CONNECTED has no per-channel filters
    check(c, fmt::format("batch {}, {} → {}", c.width, c.inChannels, c.outChannels));
  }
}

}  // namespace
}  // namespace sable::umd::compiler::convtest
