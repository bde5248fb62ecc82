// lowerConv (CONV_2D, GROUPED_CONV_2D) on the simulated NPU, bit-exact against the CPU reference:
// random small cases, layers tiled because they do not fit the scratchpad or the accumulator in
// one piece, channel slices, the layer protocol's tokens, validation errors, and the modelled MAC
// utilization of a MobileNet 1×1 layer.
#include "conv_support.h"

namespace sable::umd::compiler::convtest {
namespace {

class LowerConv : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { device_ = openDevice(&openError_); }
  static void TearDownTestSuite() { device_.reset(); }
  void SetUp() override {
    if (access(SABLE_SIMD_PATH, X_OK) != 0) GTEST_SKIP() << "sable-simd is not built (" SABLE_SIMD_PATH ")";
    ASSERT_NE(device_, nullptr) << "cannot open the device: " << openError_;
  }

  // Lowers the case, runs it on both devices and expects the same bytes; returns the lowering.
  Lowered check(const ConvCase& c, uint32_t groups, const std::string& what, const Placement& place = {},
                bool barrier = false) {
    auto cpu = testing::runOnCpu(groupedConvModel(c, groups), {c.inputData});
    EXPECT_TRUE(cpu.ok()) << what << ": CPU reference: " << cpu.error().message;
    if (!cpu.ok()) return {};
    auto lowered = lower(layerOf(c, groups), c.inputData, place, barrier);
    EXPECT_TRUE(lowered.ok()) << what << ": lowerConv: " << lowered.error().message;
    if (!lowered.ok()) return {};
    auto balance = tokenBalance(lowered->commands);
    const int64_t firstTaken = barrier ? 1 : 0;  // the SYNC's COMPUTE_TO_LOAD, taken by the first load
    EXPECT_EQ(balance[0], 0) << what << ": LOAD_TO_COMPUTE tokens left";
    EXPECT_EQ(balance[1], barrier ? 1 - firstTaken : 0) << what << ": COMPUTE_TO_LOAD tokens left";
    EXPECT_EQ(balance[2], 0) << what << ": COMPUTE_TO_STORE tokens left";
    EXPECT_EQ(balance[3], barrier ? 0 : 1) << what << ": STORE_TO_COMPUTE: the layer leaves exactly one";
    EXPECT_EQ(findScratchpadRace(lowered->commands, s16()), "") << what;
    auto npu = runJob(*device_, lowered->job);
    EXPECT_TRUE(npu.ok()) << what << ": NPU: " << npu.error().message;
    if (!npu.ok()) return {};
    lowered->counters = npu->counters;
    const uint32_t pitch = place.outputPitch != 0 ? place.outputPitch : c.outChannels;
    const auto actual = gather(npu->outputs[0], uint64_t{c.outHeight()} * c.outWidth(), c.outChannels, pitch,
                               place.outputOffset + place.outputChannelOffset);
    const std::string diff = compareBytes((*cpu)[0].bytes, actual);
    EXPECT_EQ(diff, "") << what;
    for (uint8_t v : (*cpu)[0].bytes) distinct_[v] = true;
    return std::move(*lowered);
  }

  void TearDown() override {
    if (!checkSpread_) return;
    const auto values = std::count(std::begin(distinct_), std::end(distinct_), true);
    EXPECT_GE(values, 32) << "the cases produced only " << values << " distinct output values";
  }

  static inline std::unique_ptr<umd::Device> device_;
  static inline std::string openError_;
  bool distinct_[256] = {};
  bool checkSpread_ = true;
};

// Prints (does not assert) the modelled MAC utilization MACS / (CYCLES × array_dim²) of a run.
void printUtilization(const Lowered& l, const std::string& what) {
  if (l.counters.size() <= SABLE_COUNTER_MACS) return;
  const double cycles = static_cast<double>(l.counters[SABLE_COUNTER_CYCLES]);
  const double macs = static_cast<double>(l.counters[SABLE_COUNTER_MACS]);
  std::printf("%s: %.0f cycles, %.0f MACs, utilization %.1f %% (%u steps, %u commands)\n", what.c_str(), cycles, macs,
              100.0 * macs / (cycles * 256.0), l.stats.tiles, l.stats.commands);
  if (std::getenv("SABLE_CONV_COUNTERS") != nullptr) {
    for (uint64_t v : l.counters) std::printf(" %llu", static_cast<unsigned long long>(v));
    std::printf("\n");
  }
}

ConvCase shape(uint32_t h, uint32_t w, uint32_t cin, uint32_t cout, uint32_t k, uint32_t stride, uint32_t pad) {
  ConvCase c;
  c.height = h;
  c.width = w;
  c.inChannels = cin;
  c.outChannels = cout;
  c.kernelH = c.kernelW = k;
  c.strideX = c.strideY = stride;
  c.padTop = c.padBottom = c.padLeft = c.padRight = pad;
  return c;
}

std::string describe(const ConvCase& c, uint32_t groups) {
  return fmt::format("{}×{}×{} → {} k{}×{} s{}×{} d{}×{} pad t{} b{} l{} r{} groups {} {} {} act {}", c.height,
                     c.width, c.inChannels, c.outChannels, c.kernelH, c.kernelW, c.strideY, c.strideX, c.dilationY,
                     c.dilationX, c.padTop, c.padBottom, c.padLeft, c.padRight, groups,
                     hal::toString(c.input.type), c.filter.channelScales.empty() ? "per-tensor" : "per-channel",
                     c.activation);
}

TEST_F(LowerConv, RandomSmallCases) {
  Generator gen(20261122);
  for (int i = 0; i < 24; ++i) {
    ConvCase c;
    c.height = gen.uniform(1, 12);
    c.width = gen.uniform(1, 12);
    c.inChannels = gen.uniform(1, 40);
    c.outChannels = gen.uniform(1, 40);
    c.kernelH = gen.uniform(1, 4);
    c.kernelW = gen.uniform(1, 4);
    c.strideX = gen.uniform(1, 3);
    c.strideY = gen.uniform(1, 3);
    c.dilationX = gen.uniform(1, 2);
    c.dilationY = gen.uniform(1, 2);
    c.padTop = gen.uniform(0, 3);
    c.padBottom = gen.uniform(0, 3);
    c.padLeft = gen.uniform(0, 3);
    c.padRight = gen.uniform(0, 3);
    // Every output must see at least one input pixel (NNAPI-valid windows).
    c.padTop = std::min(c.padTop, (c.kernelH - 1) * c.dilationY);
    c.padLeft = std::min(c.padLeft, (c.kernelW - 1) * c.dilationX);
    c.padBottom = std::min(c.padBottom, (c.kernelH - 1) * c.dilationY);
    c.padRight = std::min(c.padRight, (c.kernelW - 1) * c.dilationX);
    if (c.outHeight() == 0 || c.outWidth() == 0) {
      c.height += (c.kernelH - 1) * c.dilationY;
      c.width += (c.kernelW - 1) * c.dilationX;
    }
    gen.fill(c, gen.coin(), gen.coin());
    c.activation = static_cast<int32_t>(gen.uniform(0, 3));  // RELU1 and RELU6 too
    check(c, 1, describe(c, 1));
  }
}

// Few input channels (kernel_w · C ≤ 16): the kernel's columns are packed into the array's rows,
// one MATMUL per kernel row and run of columns. Every border case: windows leaving the image on
// either side by up to kernel_w − 1 columns (their own shifted weights), strides, an image exactly
// as wide as the kernel, dilated rows, signed and per-channel weights.
TEST_F(LowerConv, PacksKernelColumnsForFewInputChannels) {
  Generator gen(20261126);
  size_t packedCases = 0;
  for (int i = 0; i < 28; ++i) {
    ConvCase c;
    c.kernelW = gen.uniform(2, 5);
    c.kernelH = gen.uniform(1, 4);
    c.inChannels = gen.uniform(1, 16 / c.kernelW);
    c.outChannels = gen.uniform(1, 40);
    c.width = i % 7 == 0 ? c.kernelW : gen.uniform(c.kernelW, 20);
    c.height = gen.uniform(1, 14) + c.kernelH;
    c.strideX = gen.uniform(1, 3);
    c.strideY = gen.uniform(1, 3);
    c.dilationY = gen.uniform(1, 2);
    c.padLeft = gen.uniform(0, c.kernelW - 1);
    c.padRight = gen.uniform(0, c.kernelW - 1);
    c.padTop = gen.uniform(0, (c.kernelH - 1) * c.dilationY);
    c.padBottom = gen.uniform(0, (c.kernelH - 1) * c.dilationY);
    gen.fill(c, gen.coin(), gen.coin());
    c.activation = static_cast<int32_t>(gen.uniform(0, 3));
    const Lowered l = check(c, 1, describe(c, 1));
    if (l.commands.empty()) continue;  // reported by check()
    const auto matmuls = static_cast<uint64_t>(std::count_if(l.commands.begin(), l.commands.end(), [](const auto& s) {
      return std::holds_alternative<Matmul>(s.command);
    }));
    // These images are one spatial tile, so a step is one block of 16 output channels. Packed, a
    // step has kernel_h MATMULs per run of columns: each column whose window leaves the image is
    // a run of its own, the columns inside it one run (unpacked, it would be kernel_h × kernel_w).
    uint64_t runs = 0;
    bool interior = false;
    for (uint32_t x = 0; x < c.outWidth(); ++x) {
      const int64_t start = int64_t{x} * c.strideX - c.padLeft;
      const bool inside = start >= 0 && start + c.kernelW <= c.width;
      runs += inside ? 0 : 1;
      interior = interior || inside;
    }
    runs += interior ? 1 : 0;
    ASSERT_EQ(l.stats.tiles, (c.outChannels + 15) / 16) << describe(c, 1) << ": more than one spatial tile";
    EXPECT_EQ(matmuls, uint64_t{l.stats.tiles} * c.kernelH * runs) << describe(c, 1);
    packedCases += matmuls == uint64_t{l.stats.tiles} * c.kernelH * runs ? 1 : 0;
  }
  EXPECT_EQ(packedCases, 28u);
}

// A small layer (1×1 64→64 at 28×28, one tile would do): cut into 4 bands of rows, so that the
// first load and the last step's post-processing and store are short; its resident constants are
// loaded one output block at a time, the first MATMUL waiting only for block 0's.
TEST_F(LowerConv, SmallLayerInBandsWithConstantsByBlock) {
  Generator gen(5);
  ConvCase c = shape(28, 28, 64, 64, 1, 1, 0);
  gen.fill(c, false, false);
  const Lowered l = check(c, 1, describe(c, 1));
  ASSERT_FALSE(l.commands.empty());
  EXPECT_EQ(l.stats.tiles, 4u * 4u) << "4 bands × 4 output blocks";
  const uint32_t blockLines = 4 * 16 + sable_postproc_param_lines(16);  // 4 input blocks of weights
  std::vector<const DmaLoad*> constLoads;
  for (const StreamCommand& sc : l.commands) {
    if (const auto* d = std::get_if<DmaLoad>(&sc.command); d && d->elem_bytes == 16 && d->ny == 1 && d->nz == 1 &&
                                                             d->nx == blockLines) {
      constLoads.push_back(d);
    }
  }
  ASSERT_EQ(constLoads.size(), 4u) << "one DMA_LOAD per output block's weights and parameters";
  for (size_t i = 0; i < constLoads.size(); ++i) EXPECT_EQ(constLoads[i]->sp_addr, i * blockLines);
  ASSERT_TRUE(std::holds_alternative<DmaLoad>(l.commands[0].command));
  EXPECT_EQ(std::get<DmaLoad>(l.commands[0].command).nx, blockLines) << "block 0's constants load first";
}

// Random windows on images of more than 1024 output pixels: bands (and for the wide ones column
// spans) whose halos cross strides, dilations and the border padding.
TEST_F(LowerConv, RandomTiledCases) {
  Generator gen(20261123);
  for (int i = 0; i < 8; ++i) {
    ConvCase c;
    const bool wide = i % 4 == 3;
    c.height = wide ? gen.uniform(2, 5) : gen.uniform(36, 70);
    c.width = wide ? gen.uniform(1100, 1400) : gen.uniform(36, 70);
    c.inChannels = gen.uniform(1, 36);
    c.outChannels = gen.uniform(1, 36);
    c.kernelH = gen.uniform(1, 5);
    c.kernelW = gen.uniform(1, 5);
    c.strideX = gen.uniform(1, 2);
    c.strideY = wide ? 1 : gen.uniform(1, 2);
    c.dilationX = gen.uniform(1, 3);
    c.dilationY = wide ? 1 : gen.uniform(1, 3);
    c.padTop = std::min(gen.uniform(0, 4), (c.kernelH - 1) * c.dilationY);
    c.padBottom = std::min(gen.uniform(0, 4), (c.kernelH - 1) * c.dilationY);
    c.padLeft = std::min(gen.uniform(0, 4), (c.kernelW - 1) * c.dilationX);
    c.padRight = std::min(gen.uniform(0, 4), (c.kernelW - 1) * c.dilationX);
    if (c.outHeight() == 0) c.height += (c.kernelH - 1) * c.dilationY;
    gen.fill(c, gen.coin(), gen.coin());
    const Lowered l = check(c, 1, describe(c, 1));
    const uint32_t outBlocks = (c.outChannels + 15) / 16;
    if (uint64_t{c.outHeight()} * c.outWidth() > 1024) {
      EXPECT_GT(l.stats.tiles, outBlocks) << describe(c, 1) << ": more than one spatial tile expected";
    }
  }
}

// 56×56×64 → 128: the input alone is 12544 lines, the output 401 KiB: tiled in bands.
TEST_F(LowerConv, LargerThanTheScratchpad1x1) {
  Generator gen(1);
  ConvCase c = shape(56, 56, 64, 128, 1, 1, 0);
  gen.fill(c, false, false);
  const Lowered l = check(c, 1, describe(c, 1));
  printUtilization(l, "56×56×64 → 128 1×1");
  EXPECT_GT(l.stats.tiles, 8u) << "expected several spatial tiles × 8 output blocks";
  EXPECT_EQ(l.stats.macs, uint64_t{56} * 56 * 64 * 128);
  EXPECT_EQ(l.stats.dramBytesWritten, uint64_t{56} * 56 * 128);
}

// 112×112×32 → 64, 3×3 stride 2 (MobileNet's first pointwise sizes, with a window).
TEST_F(LowerConv, LargerThanTheScratchpadStride2) {
  Generator gen(2);
  ConvCase c = shape(112, 112, 32, 64, 3, 2, 0);
  c.padBottom = c.padRight = 1;  // SAME padding of an even input at stride 2
  gen.fill(c, true, true);
  const Lowered l = check(c, 1, describe(c, 1));
  printUtilization(l, "112×112×32 → 64 3×3 stride 2");
  EXPECT_GT(l.stats.tiles, 4u) << "expected several spatial tiles";
}

TEST_F(LowerConv, SevenBySevenKernelStride2OddSize) {
  Generator gen(3);
  ConvCase c = shape(23, 21, 3, 24, 7, 2, 3);
  gen.fill(c, false, true);
  check(c, 1, describe(c, 1));
}

TEST_F(LowerConv, ChannelsNotAMultipleOfTheArray) {
  Generator gen(4);
  ConvCase c = shape(9, 11, 19, 37, 3, 1, 1);
  gen.fill(c, true, false);
  check(c, 1, describe(c, 1));
}

// Wide rows: one output row exceeds the accumulator (1024 rows), so tiles split columns too.
TEST_F(LowerConv, RowWiderThanTheAccumulator) {
  Generator gen(5);
  ConvCase c = shape(3, 1500, 8, 16, 3, 1, 1);
  gen.fill(c, false, false);
  check(c, 1, describe(c, 1));
}

// 3×3 × 512 → 512 weights (2.3 MiB) stream through the scratchpad per output block.
TEST_F(LowerConv, StreamedWeights) {
  Generator gen(6);
  ConvCase c = shape(4, 4, 256, 96, 3, 1, 1);
  gen.fill(c, true, true);
  check(c, 1, describe(c, 1));
}

// Weights so large (3×3×1024 per output block: 9228 lines) that only one constant buffer fits:
// a weight load cannot overlap the compute whose weights it replaces, the tokens serialize them.
TEST_F(LowerConv, SingleBufferedWhenTheBlocksAreHuge) {
  Generator gen(12);
  ConvCase c = shape(3, 3, 1024, 20, 3, 1, 1);
  gen.fill(c, false, false);
  check(c, 1, describe(c, 1));
}

// Two images: each tile's DMAs start at its image.
TEST_F(LowerConv, Batch) {
  Generator gen(13);
  ConvCase c = shape(9, 7, 24, 40, 3, 2, 1);
  gen.fill(c, true, true);
  ConvCase second = c;
  second.inputData = gen.bytes(c.inputData.size());
  auto first = testing::runOnCpu(groupedConvModel(c, 1), {c.inputData});
  auto other = testing::runOnCpu(groupedConvModel(second, 1), {second.inputData});
  ASSERT_TRUE(first.ok() && other.ok()) << "CPU reference failed";
  std::vector<uint8_t> input = c.inputData;
  input.insert(input.end(), second.inputData.begin(), second.inputData.end());
  std::vector<uint8_t> expected = (*first)[0].bytes;
  expected.insert(expected.end(), (*other)[0].bytes.begin(), (*other)[0].bytes.end());
  auto lowered = lower(layerOf(c, 1, 2), input);
  ASSERT_TRUE(lowered.ok()) << lowered.error().message;
  auto npu = runJob(*device_, lowered->job);
  ASSERT_TRUE(npu.ok()) << npu.error().message;
  const auto actual = gather(npu->outputs[0], uint64_t{2} * c.outHeight() * c.outWidth(), c.outChannels,
                             c.outChannels, 0);
  EXPECT_EQ(compareBytes(expected, actual), "") << "batch of 2, " << describe(c, 1);
  for (uint8_t v : expected) distinct_[v] = true;
}

// The small configuration (8×8 array, 64 KiB scratchpad): the same layers lower into streams the
// builder accepts (token flow included); the device under test is s16, so they are not run.
TEST_F(LowerConv, LowersForTheSmallConfiguration) {
  checkSpread_ = false;
  Generator gen(14);
  const sable_hw_config& s8 = *findConfig("s8");
  for (ConvCase c : {shape(56, 56, 64, 128, 1, 1, 0), shape(14, 14, 512, 512, 1, 1, 0), shape(23, 21, 3, 24, 7, 2, 3),
                     shape(4, 4, 512, 20, 3, 1, 1)}) {
    gen.fill(c, false, false);
    CommandBuilder builder(s8);
    ConstantPool pool(2);
    LoweringContext context{.builder = builder, .constants = pool, .config = s8};
    auto stats = lowerConv(context, layerOf(c, 1));
    ASSERT_TRUE(stats.ok()) << describe(c, 1) << ": " << stats.error().message;
    auto stream = builder.finish();
    EXPECT_TRUE(stream.ok()) << describe(c, 1) << ": " << stream.error().message;
    EXPECT_EQ(tokenBalance(builder.commands()), (std::array<int64_t, SABLE_DEP_CHANNELS>{0, 0, 0, 1}))
        << describe(c, 1);
  }
}

TEST_F(LowerConv, Grouped) {
  Generator gen(7);
  for (auto [cin, cout, groups] : {std::tuple{8u, 12u, 2u}, {48u, 64u, 4u}, {30u, 21u, 3u}}) {
    ConvCase c = shape(10, 9, cin, cout, 3, 1, 1);
    gen.fill(c, gen.coin(), gen.coin(), groups);
    check(c, groups, describe(c, groups));
  }
}

// The input a channel slice of a wider tensor, the output written into a slice of another
// (CONCATENATION without copies); bytes outside the slice are untouched.
TEST_F(LowerConv, ChannelSlices) {
  Generator gen(8);
  ConvCase c = shape(7, 6, 20, 24, 3, 1, 1);
  gen.fill(c, false, false);
  const Placement place{.inputPitch = 48, .inputChannelOffset = 5, .outputPitch = 40, .outputChannelOffset = 8,
                        .inputOffset = 32, .outputOffset = 64};
  check(c, 1, describe(c, 1) + " (slices)", place);
}

// After a previous layer: the barrier's COMPUTE_TO_LOAD is taken by the first load.
TEST_F(LowerConv, AfterAPreviousLayer) {
  Generator gen(9);
  ConvCase c = shape(5, 5, 16, 16, 3, 1, 1);
  gen.fill(c, false, false);
  const Lowered l = check(c, 1, describe(c, 1) + " (after a layer)", {}, true);
  ASSERT_FALSE(l.commands.empty());
  EXPECT_TRUE(std::holds_alternative<Sync>(l.commands[0].command)) << "the layer starts with the barrier";
  checkSpread_ = false;
}

TEST_F(LowerConv, RejectsWhatTheHardwareCannotDo) {
  checkSpread_ = false;
  Generator gen(10);
  ConvCase c = shape(8, 8, 4, 4, 3, 1, 1);
  gen.fill(c, false, false);
  auto expectError = [&](ConvLayer layer, const std::string& needle) {
    CommandBuilder builder(s16());
    ConstantPool pool(2);
    LoweringContext context{.builder = builder, .constants = pool, .config = s16()};
    auto r = lowerConv(context, layer);
    ASSERT_FALSE(r.ok()) << "expected an error mentioning '" << needle << "'";
    EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
    EXPECT_EQ(builder.commandCount(), 0u) << "nothing emitted for a refused layer";
    EXPECT_TRUE(pool.bytes().empty()) << "no constants added for a refused layer";
  };
  ConvCase wideKernel = shape(8, 20, 4, 4, 17, 1, 0);
  gen.fill(wideKernel, false, false);
  ConvLayer pad = layerOf(wideKernel, 1);
  pad.geometry.padTop = 16;
  pad.output.h = 8 + 16 + 1 - 17;
  expectError(pad, "above 15 per side");
  ConvLayer padWide = layerOf(c, 1);
  padWide.geometry.padLeft = 3;
  padWide.output.w = 8 + 3 + 1 - 2;
  expectError(padWide, "smaller than the dilated window");
  ConvLayer stride = layerOf(c, 1);
  stride.geometry.strideX = 16;
  stride.output.w = 1;
  expectError(stride, "strides");
  ConvLayer shapeMismatch = layerOf(c, 1);
  shapeMismatch.output.h = 7;
  expectError(shapeMismatch, "output");
  ConvLayer filter = layerOf(c, 1);
  filter.filter.pop_back();
  expectError(filter, "filter has");
  ConvLayer bias = layerOf(c, 1);
  bias.bias.push_back(0);
  expectError(bias, "bias");
  ConvLayer groups = layerOf(c, 3);
  expectError(groups, "groups");
  ConvCase huge = shape(3, 3, 8192, 1, 3, 1, 1);
  gen.fill(huge, false, false);
  expectError(layerOf(huge, 1), "too large");
  ConvLayer type = layerOf(c, 1);
  type.output.quant.type = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  expectError(type, "differ");
}

// A depthwise layer handed to lowerConv goes to lowerDepthwise (the vector unit): bit-exact.
TEST_F(LowerConv, DispatchesDepthwise) {
  checkSpread_ = false;
  Generator gen(17);
  devicetest::DepthwiseCase d;
  d.height = 9;
  d.width = 8;
  d.channels = 20;
  d.kernelH = d.kernelW = 3;
  d.padTop = d.padBottom = d.padLeft = d.padRight = 1;
  d.input = {OperandType::TENSOR_QUANT8_ASYMM, 0.03f, 120};
  d.filter = {OperandType::TENSOR_QUANT8_ASYMM, 0.01f, 128};
  d.output = {OperandType::TENSOR_QUANT8_ASYMM, 0.03f * 0.01f * 74.0f * 74.0f * 3.0f * 2.5f / 128.0f, 128};
  d.inputData = gen.bytes(size_t{9} * 8 * 20);
  d.filterData = gen.bytes(size_t{9} * 20);
  for (uint32_t ch = 0; ch < 20; ++ch) d.bias.push_back(static_cast<int32_t>(gen.uniform(0, 2000)) - 1000);
  auto cpu = testing::runOnCpu(devicetest::depthwiseModel(d), {d.inputData});
  ASSERT_TRUE(cpu.ok()) << cpu.error().message;
  ConvLayer l;
  l.input = {.n = 1, .h = 9, .w = 8, .c = 20, .quant = toQuantization(d.input)};
  l.output = {.n = 1, .h = d.outHeight(), .w = d.outWidth(), .c = 20, .quant = toQuantization(d.output)};
  l.filterQuant = toQuantization(d.filter);
  l.filter = d.filterData;
  l.bias = d.bias;
  l.geometry = {.kernelH = 3, .kernelW = 3, .padTop = 1, .padBottom = 1, .padLeft = 1, .padRight = 1};
  l.depthwise = true;
  auto lowered = lower(l, d.inputData);
  ASSERT_TRUE(lowered.ok()) << "lowerConv → lowerDepthwise: " << lowered.error().message;
  auto npu = runJob(*device_, lowered->job);
  ASSERT_TRUE(npu.ok()) << npu.error().message;
  const auto actual = gather(npu->outputs[0], uint64_t{d.outHeight()} * d.outWidth(), 20, 20, 0);
  EXPECT_EQ(compareBytes((*cpu)[0].bytes, actual), "") << "depthwise 9×8×20 3×3 through lowerConv";
  EXPECT_FALSE(std::any_of(lowered->commands.begin(), lowered->commands.end(), [](const StreamCommand& c) {
    return std::holds_alternative<Matmul>(c.command);
  })) << "a depthwise layer runs on the vector unit, not the array";
}

// MobileNet v1's 14×14×512 → 512 pointwise layer: prints MACS / (CYCLES × 256) of the cycle model.
TEST_F(LowerConv, MobileNetPointwiseUtilization) {
  checkSpread_ = false;
  Generator gen(11);
  ConvCase c = shape(14, 14, 512, 512, 1, 1, 0);
  gen.fill(c, false, false);
  const Lowered l = check(c, 1, describe(c, 1));
  ASSERT_FALSE(l.job.stream.empty());
  ASSERT_GT(l.counters.size(), size_t{SABLE_COUNTER_MACS});
  printUtilization(l, "MobileNet 14×14×512 → 512 1×1");
}

// The other convolutions of MobileNet v1 (224×224 input): bit-exact, and their modelled MAC
// utilization printed (the counter counts the array's padded lanes too).
TEST_F(LowerConv, MobileNetLayersUtilization) {
  checkSpread_ = false;
  Generator gen(16);
  struct Layer {
    uint32_t size, cin, cout, kernel, stride;
  };
  for (const Layer& m : {Layer{224, 3, 32, 3, 2}, Layer{112, 32, 64, 1, 1}, Layer{56, 64, 128, 1, 1},
                         Layer{56, 128, 128, 1, 1}, Layer{28, 256, 256, 1, 1}, Layer{7, 1024, 1024, 1, 1}}) {
    ConvCase c = shape(m.size, m.size, m.cin, m.cout, m.kernel, m.stride, 0);
    if (m.kernel == 3) c.padBottom = c.padRight = 1;  // SAME at stride 2
    gen.fill(c, false, false);
    const Lowered l = check(c, 1, describe(c, 1));
    printUtilization(l, fmt::format("{}×{}×{} → {} {}×{} stride {}", m.size, m.size, m.cin, m.cout, m.kernel,
                                    m.kernel, m.stride));
  }
}

}  // namespace
}  // namespace sable::umd::compiler::convtest
