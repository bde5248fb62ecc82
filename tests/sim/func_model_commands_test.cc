// Every command of docs/isa.md alone and combined, against naive reference loops written here.
#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "func_model_harness.h"

namespace sable::sim::test {
namespace {

constexpr uint32_t L2C = SABLE_DEP_LOAD_TO_COMPUTE;
constexpr uint32_t C2S = SABLE_DEP_COMPUTE_TO_STORE;

void expectOk(const JobResult& r) {
  ASSERT_EQ(r.errorCause, SABLE_ERROR_NONE) << "job failed with " << sable_error_cause_name(r.errorCause) << " at command "
                                            << r.errorCommand;
}

void expectBytes(const uint8_t* actual, const std::vector<uint8_t>& expected, const char* what) {
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(int{actual[i]}, int{expected[i]}) << what << ": byte " << i << " differs";
  }
}

// A reference result that is mostly one clamped value would not test the arithmetic.
void expectVaried(const std::vector<uint8_t>& expected) {
  std::vector<uint8_t> sorted = expected;
  std::sort(sorted.begin(), sorted.end());
  const auto distinct = std::unique(sorted.begin(), sorted.end()) - sorted.begin();
  EXPECT_GE(distinct, std::min<long>(32, static_cast<long>(expected.size() / 4))) << "the test data saturates: choose other parameters";
}

// Writes a POSTPROC parameter block (bias, multiplier, shift per lane) at a region-2 offset.
void putPostprocParams(Harness& h, uint32_t offset, const std::vector<int32_t>& bias, const std::vector<int32_t>& mult,
                       const std::vector<int32_t>& shift) {
  for (uint32_t c = 0; c < h.dim; ++c) {
    h.putLe32(2, offset + sable_postproc_param_offset(h.dim, SABLE_POSTPROC_PARAM_BIAS, c), bias[c]);
    h.putLe32(2, offset + sable_postproc_param_offset(h.dim, SABLE_POSTPROC_PARAM_MULTIPLIER, c), mult[c]);
    h.putLe32(2, offset + sable_postproc_param_offset(h.dim, SABLE_POSTPROC_PARAM_SHIFT, c), shift[c]);
  }
}

Cmd& addPostproc(Harness& h, uint32_t acc, uint32_t out, uint32_t nx, uint32_t ny, uint32_t params, bool outSigned, int32_t zp,
                 int32_t lo, int32_t hi, uint32_t wait, uint32_t signal) {
  Cmd& c = h.add(SABLE_OP_POSTPROC, wait, signal);
  sable_cmd_postproc_set_output_signed(c.data(), outSigned);
  sable_cmd_postproc_set_acc_addr(c.data(), acc);
  sable_cmd_postproc_set_output_addr(c.data(), out);
  sable_cmd_postproc_set_nx(c.data(), nx);
  sable_cmd_postproc_set_ny(c.data(), ny);
  sable_cmd_postproc_set_output_stride_x(c.data(), 1);
  sable_cmd_postproc_set_output_stride_y(c.data(), nx);
  sable_cmd_postproc_set_param_addr(c.data(), params);
  sable_cmd_postproc_set_output_zero_point(c.data(), zp);
  sable_cmd_postproc_set_clamp_min(c.data(), lo);
  sable_cmd_postproc_set_clamp_max(c.data(), hi);
  return c;
}

TEST(FuncModelCommands, DmaLoadCopies3DStridedElementsWithRepeatAndPadding) {
  Harness h;
  h.fillRandom(0, 0, 4096, 1);
  const uint32_t eb = 3, rep = 2, nx = 4, ny = 3, nz = 2, sx = 5, sy = 23, sz = 101, off = 7;
  const uint32_t pl = 1, pr = 2, pt = 1, pb = 1;
  const uint8_t pad = 0x7E;
  Cmd& c = h.add(SABLE_OP_DMA_LOAD, 0, L2C);
  sable_cmd_dma_load_set_sp_addr(c.data(), 10);
  sable_cmd_dma_load_set_region(c.data(), 0);
  sable_cmd_dma_load_set_dram_offset(c.data(), off);
  sable_cmd_dma_load_set_elem_bytes(c.data(), eb);
  sable_cmd_dma_load_set_repeat(c.data(), rep);
  sable_cmd_dma_load_set_pad_value(c.data(), pad);
  sable_cmd_dma_load_set_nx(c.data(), nx);
  sable_cmd_dma_load_set_ny(c.data(), ny);
  sable_cmd_dma_load_set_nz(c.data(), nz);
  sable_cmd_dma_load_set_pad_left(c.data(), pl);
  sable_cmd_dma_load_set_pad_right(c.data(), pr);
  sable_cmd_dma_load_set_pad_top(c.data(), pt);
  sable_cmd_dma_load_set_pad_bottom(c.data(), pb);
  sable_cmd_dma_load_set_dram_stride_x(c.data(), sx);
  sable_cmd_dma_load_set_dram_stride_y(c.data(), sy);
  sable_cmd_dma_load_set_dram_stride_z(c.data(), sz);
  const uint32_t width = pl + nx + pr, height = pt + ny + pb, lines = nz * height * width;
  // A no-op compute command passes the token on (the store may only run after the load).
  Cmd& lut = h.add(SABLE_OP_LUT, L2C, C2S);
  sable_cmd_lut_set_input_addr(lut.data(), 2000);
  sable_cmd_lut_set_output_addr(lut.data(), 2001);
  sable_cmd_lut_set_count(lut.data(), 1);
  sable_cmd_lut_set_table_addr(lut.data(), 3000);
  h.storeLines(10, 1, 0, lines, C2S);
  h.end();
  expectOk(h.run());

  std::vector<uint8_t> expected(size_t{lines} * h.dim, pad);
  const uint8_t* src = h.region(0);
  for (uint32_t z = 0; z < nz; ++z) {
    for (uint32_t y = 0; y < ny; ++y) {
      for (uint32_t x = 0; x < nx; ++x) {
        uint8_t* line = &expected[((z * height + pt + y) * width + pl + x) * h.dim];
        for (uint32_t b = 0; b < eb; ++b) {
          for (uint32_t r = 0; r < rep; ++r) line[b * rep + r] = src[off + z * sz + y * sy + x * sx + b];
        }
      }
    }
  }
  expectBytes(h.region(1), expected, "loaded lines");
  EXPECT_EQ(*h.region(1, expected.size()), 0) << "the store wrote past its lines";
}

TEST(FuncModelCommands, DmaStoreWritesFirstElemBytesOfEachLineToStridedAddresses) {
  Harness h;
  h.fillRandom(0, 0, 4096, 2);
  std::memset(h.region(1), 0xCD, 4096);
  const uint32_t eb = 5, nx = 3, ny = 2, nz = 2, sx = 7, sy = 40, sz = 100, off = 3;
  h.loadLines(0, 0, 0, nx * ny * nz, 0, L2C);
  Cmd& lut = h.add(SABLE_OP_LUT, L2C, C2S);  // passes the token on
  sable_cmd_lut_set_input_addr(lut.data(), 2000);
  sable_cmd_lut_set_output_addr(lut.data(), 2001);
  sable_cmd_lut_set_count(lut.data(), 1);
  sable_cmd_lut_set_table_addr(lut.data(), 3000);
  Cmd& c = h.add(SABLE_OP_DMA_STORE, C2S);
  sable_cmd_dma_store_set_sp_addr(c.data(), 0);
  sable_cmd_dma_store_set_region(c.data(), 1);
  sable_cmd_dma_store_set_dram_offset(c.data(), off);
  sable_cmd_dma_store_set_elem_bytes(c.data(), eb);
  sable_cmd_dma_store_set_nx(c.data(), nx);
  sable_cmd_dma_store_set_ny(c.data(), ny);
  sable_cmd_dma_store_set_nz(c.data(), nz);
  sable_cmd_dma_store_set_dram_stride_x(c.data(), sx);
  sable_cmd_dma_store_set_dram_stride_y(c.data(), sy);
  sable_cmd_dma_store_set_dram_stride_z(c.data(), sz);
  h.end();
  expectOk(h.run());
  std::vector<uint8_t> expected(4096, 0xCD);
  for (uint32_t z = 0; z < nz; ++z) {
    for (uint32_t y = 0; y < ny; ++y) {
      for (uint32_t x = 0; x < nx; ++x) {
        const uint8_t* line = h.region(0, ((z * ny + y) * nx + x) * h.dim);
        std::memcpy(&expected[off + z * sz + y * sy + x * sx], line, eb);
      }
    }
  }
  expectBytes(h.region(1), expected, "stored bytes");
}

struct MatmulCase {
  bool inSigned;
  bool wSigned;
};

class FuncModelMatmul : public ::testing::TestWithParam<MatmulCase> {};

// Two MATMULs (the second accumulating) over a strided input grid, requantized by POSTPROC with
// per-lane bias, multiplier and shift, against a reference convolution.
TEST_P(FuncModelMatmul, MatchesReferenceThroughPostproc) {
  const auto [inSigned, wSigned] = GetParam();
  Harness h;
  const uint32_t d = h.dim;
  const uint32_t gridW = 7, gridH = 5, nx = 3, ny = 2, isx = 2, isy = gridW;
  const int32_t izp[2] = {inSigned ? -3 : 128, 1000}, wzp[2] = {wSigned ? 5 : 127, -32768};
  h.fillRandom(0, 0, (2 * d + gridW * gridH) * d, 3 + inSigned * 2 + wSigned);
  std::vector<int32_t> bias(d), mult(d), shift(d);
  std::mt19937 rng(7);
  for (uint32_t c = 0; c < d; ++c) {
    bias[c] = static_cast<int32_t>(rng() % 200001) - 100000;
    mult[c] = static_cast<int32_t>((1u << 30) + rng() % (1u << 30));
    shift[c] = c == 0 ? 1 : -static_cast<int32_t>(21 + c % 4);  // lane 0: left shift (saturates)
  }
  putPostprocParams(h, 0, bias, mult, shift);
  // Scratchpad: weights A at 0, weights B at d, input grid at 2d, parameters at 1000, output at 1100.
  h.loadLines(0, 0, 0, 2 * d + gridW * gridH, 0, 0);
  h.loadLines(1000, 2, 0, sable_postproc_param_lines(d), 0, L2C);
  for (int pass = 0; pass < 2; ++pass) {
    Cmd& m = h.add(SABLE_OP_MATMUL, pass == 0 ? L2C : 0);
    sable_cmd_matmul_set_accumulate(m.data(), pass);
    sable_cmd_matmul_set_input_signed(m.data(), inSigned);
    sable_cmd_matmul_set_weight_signed(m.data(), wSigned);
    sable_cmd_matmul_set_weight_addr(m.data(), pass * d);
    sable_cmd_matmul_set_input_addr(m.data(), 2 * d + pass);  // the second pass is shifted by one pixel
    sable_cmd_matmul_set_acc_addr(m.data(), 5);
    sable_cmd_matmul_set_nx(m.data(), nx);
    sable_cmd_matmul_set_ny(m.data(), ny);
    sable_cmd_matmul_set_input_stride_x(m.data(), isx);
    sable_cmd_matmul_set_input_stride_y(m.data(), isy);
    sable_cmd_matmul_set_input_zero_point(m.data(), izp[pass]);
    sable_cmd_matmul_set_weight_zero_point(m.data(), wzp[pass]);
  }
  addPostproc(h, 5, 1100, nx, ny, 1000, true, -7, -100, 120, 0, C2S);
  h.storeLines(1100, 1, 0, nx * ny, C2S);
  h.end();
  const JobResult r = h.run();
  expectOk(r);

  std::vector<uint8_t> expected(size_t{nx} * ny * d);
  const uint8_t* src = h.region(0);
  for (uint32_t y = 0; y < ny; ++y) {
    for (uint32_t x = 0; x < nx; ++x) {
      for (uint32_t n = 0; n < d; ++n) {
        int64_t acc = 0;
        for (int pass = 0; pass < 2; ++pass) {
          const uint8_t* in = src + (2 * d + pass + y * isy + x * isx) * d;
          for (uint32_t k = 0; k < d; ++k) {
            const uint8_t wb = src[(pass * d + k) * d + n];
            acc += int64_t{asValue(in[k], inSigned) - izp[pass]} * (asValue(wb, wSigned) - wzp[pass]);
          }
        }
        const int32_t acc32 = static_cast<int32_t>(static_cast<uint32_t>(acc));  // int32 wrap-around
        const int32_t v = static_cast<int32_t>(static_cast<uint32_t>(acc32) + static_cast<uint32_t>(bias[n]));
        expected[(y * nx + x) * d + n] = refSaturate(int64_t{refRequantize(v, mult[n], shift[n])} - 7, -100, 120, true);
      }
    }
  }
  expectBytes(h.region(1), expected, "requantized matmul");
  expectVaried(expected);
  EXPECT_EQ(r.counters[SABLE_COUNTER_MACS], 2u * nx * ny * d * d);
}

INSTANTIATE_TEST_SUITE_P(Signedness, FuncModelMatmul,
                         ::testing::Values(MatmulCase{false, false}, MatmulCase{false, true}, MatmulCase{true, false},
                                           MatmulCase{true, true}));

// POSTPROC on hand-computed values: identity weights make the accumulator the input minus its
// zero point; bias 10, multiplier 0.5 (2^30), shift 0 rounds half toward +infinity.
TEST(FuncModelCommands, PostprocRoundsHalfUpAndClampsOnHandComputedValues) {
  Harness h;
  const uint32_t d = h.dim;
  for (uint32_t k = 0; k < d; ++k) *h.region(0, k * d + k) = 1;  // identity weights at line 0..d-1
  const int8_t in[4] = {5, -13, -12, 100};                          // acc = in
  for (int i = 0; i < 4; ++i) *h.region(0, d * d + i) = static_cast<uint8_t>(in[i]);
  putPostprocParams(h, 0, std::vector<int32_t>(d, 10), std::vector<int32_t>(d, 1 << 30), std::vector<int32_t>(d, 0));
  h.loadLines(0, 0, 0, d + 1, 0, 0);
  h.loadLines(100, 2, 0, 12, 0, L2C);
  Cmd& m = h.add(SABLE_OP_MATMUL, L2C);
  sable_cmd_matmul_set_input_signed(m.data(), 1);
  sable_cmd_matmul_set_input_addr(m.data(), d);
  sable_cmd_matmul_set_nx(m.data(), 1);
  sable_cmd_matmul_set_ny(m.data(), 1);
  addPostproc(h, 0, 200, 1, 1, 100, false, 3, 0, 40, 0, C2S);
  h.storeLines(200, 1, 0, 1, C2S);
  h.end();
  expectOk(h.run());
  // (5+10)/2 = 7.5 → 8, +3 = 11; (-13+10)/2 = -1.5 → -1, +3 = 2; (-12+10)/2 = -1, +3 = 2;
  // (100+10)/2 = 55, +3 = 58 → clamp_max 40; lanes with acc 0: 10/2 = 5, +3 = 8.
  const std::vector<uint8_t> expected = {11, 2, 2, 40, 8, 8};
  expectBytes(h.region(1), expected, "postproc output");
}

TEST(FuncModelCommands, DepthwiseMatchesReferenceWithStrideDilationAndAccumulate) {
  Harness h;
  const uint32_t d = h.dim;
  const uint32_t gridW = 9, gridH = 9, kw = 3, kh = 2, sx = 2, sy = 1, dx = 2, dy = 3, nx = 2, ny = 3;
  const int32_t izp = -5, wzp = 3;
  // weights (kh·kw lines) at 0, input grid at 10, second weights at 200.
  h.fillRandom(0, 0, (10 + gridW * gridH) * d, 11);
  h.fillRandom(0, 200 * d, kh * kw * d, 12);
  putPostprocParams(h, 0, std::vector<int32_t>(d, 0), std::vector<int32_t>(d, 1 << 30), std::vector<int32_t>(d, -8));
  h.loadLines(0, 0, 0, 10 + gridW * gridH, 0, 0);
  h.loadLines(200, 0, 200 * d, kh * kw, 0, 0);
  h.loadLines(300, 2, 0, 12, 0, L2C);
  for (int pass = 0; pass < 2; ++pass) {
    Cmd& c = h.add(SABLE_OP_DEPTHWISE, pass == 0 ? L2C : 0);
    sable_cmd_depthwise_set_accumulate(c.data(), pass);
    sable_cmd_depthwise_set_input_signed(c.data(), 1);
    sable_cmd_depthwise_set_weight_signed(c.data(), pass);  // uint8 then int8 weights
    sable_cmd_depthwise_set_weight_addr(c.data(), pass == 0 ? 0 : 200);
    sable_cmd_depthwise_set_input_addr(c.data(), 10);
    sable_cmd_depthwise_set_acc_addr(c.data(), 7);
    sable_cmd_depthwise_set_nx(c.data(), nx);
    sable_cmd_depthwise_set_ny(c.data(), ny);
    sable_cmd_depthwise_set_input_stride_x(c.data(), 1);
    sable_cmd_depthwise_set_input_stride_y(c.data(), gridW);
    sable_cmd_depthwise_set_input_zero_point(c.data(), izp);
    sable_cmd_depthwise_set_weight_zero_point(c.data(), wzp);
    sable_cmd_depthwise_set_kernel_w(c.data(), kw);
    sable_cmd_depthwise_set_kernel_h(c.data(), kh);
    sable_cmd_depthwise_set_stride_x(c.data(), sx);
    sable_cmd_depthwise_set_stride_y(c.data(), sy);
    sable_cmd_depthwise_set_dilation_x(c.data(), dx);
    sable_cmd_depthwise_set_dilation_y(c.data(), dy);
  }
  addPostproc(h, 7, 400, nx, ny, 300, true, 0, -128, 127, 0, C2S);
  h.storeLines(400, 1, 0, nx * ny, C2S);
  h.end();
  const JobResult r = h.run();
  expectOk(r);
  std::vector<uint8_t> expected(size_t{nx} * ny * d);
  for (uint32_t y = 0; y < ny; ++y) {
    for (uint32_t x = 0; x < nx; ++x) {
      for (uint32_t c = 0; c < d; ++c) {
        int64_t acc = 0;
        for (int pass = 0; pass < 2; ++pass) {
          for (uint32_t ky = 0; ky < kh; ++ky) {
            for (uint32_t kx = 0; kx < kw; ++kx) {
              const uint32_t iy = y * sy + ky * dy, ix = x * sx + kx * dx;
              const uint8_t ib = *h.region(0, (10 + iy * gridW + ix) * d + c);
              const uint8_t wb = *h.region(0, ((pass == 0 ? 0 : 200) + ky * kw + kx) * d + c);
              acc += int64_t{asValue(ib, true) - izp} * (asValue(wb, pass == 1) - wzp);
            }
          }
        }
        expected[(y * nx + x) * d + c] = refSaturate(refRequantize(static_cast<int32_t>(acc), 1 << 30, -8), -128, 127, true);
      }
    }
  }
  expectBytes(h.region(1), expected, "depthwise");
  expectVaried(expected);
  EXPECT_EQ(r.counters[SABLE_COUNTER_MACS], 2u * nx * ny * kh * kw * d);
}

struct PoolCase {
  bool average;
  bool isSigned;
};

class FuncModelPool : public ::testing::TestWithParam<PoolCase> {};

TEST_P(FuncModelPool, MatchesReferenceWithSkippedPaddingTapsAndClamp) {
  const auto [average, isSigned] = GetParam();
  Harness h;
  const uint32_t d = h.dim;
  const int32_t iw = 5, ih = 4, kw = 3, kh = 3, sx = 2, sy = 2, pl = 1, pt = 1, nx = 3, ny = 2;
  const int32_t lo = isSigned ? -100 : 3, hi = isSigned ? 90 : 250;
  h.fillRandom(0, 0, iw * ih * d, 21 + average * 2 + isSigned);
  h.loadLines(0, 0, 0, iw * ih, 0, L2C);
  Cmd& c = h.add(SABLE_OP_POOL, L2C, C2S);
  sable_cmd_pool_set_mode(c.data(), average ? SABLE_POOL_MODE_AVERAGE : SABLE_POOL_MODE_MAX);
  sable_cmd_pool_set_signed(c.data(), isSigned);
  sable_cmd_pool_set_input_addr(c.data(), 0);
  sable_cmd_pool_set_output_addr(c.data(), 100);
  sable_cmd_pool_set_nx(c.data(), nx);
  sable_cmd_pool_set_ny(c.data(), ny);
  sable_cmd_pool_set_input_width(c.data(), iw);
  sable_cmd_pool_set_input_height(c.data(), ih);
  sable_cmd_pool_set_input_stride_x(c.data(), 1);
  sable_cmd_pool_set_input_stride_y(c.data(), iw);
  sable_cmd_pool_set_output_stride_x(c.data(), 1);
  sable_cmd_pool_set_output_stride_y(c.data(), nx);
  sable_cmd_pool_set_kernel_w(c.data(), kw);
  sable_cmd_pool_set_kernel_h(c.data(), kh);
  sable_cmd_pool_set_stride_x(c.data(), sx);
  sable_cmd_pool_set_stride_y(c.data(), sy);
  sable_cmd_pool_set_pad_left(c.data(), pl);
  sable_cmd_pool_set_pad_top(c.data(), pt);
  sable_cmd_pool_set_clamp_min(c.data(), lo);
  sable_cmd_pool_set_clamp_max(c.data(), hi);
  h.storeLines(100, 1, 0, nx * ny, C2S);
  h.end();
  expectOk(h.run());
  std::vector<uint8_t> expected(size_t(nx) * ny * d);
  for (int32_t y = 0; y < ny; ++y) {
    for (int32_t x = 0; x < nx; ++x) {
      for (uint32_t ch = 0; ch < d; ++ch) {
        int64_t sum = 0, best = -1000, n = 0;
        for (int32_t ky = 0; ky < kh; ++ky) {
          for (int32_t kx = 0; kx < kw; ++kx) {
            const int32_t iy = y * sy - pt + ky, ix = x * sx - pl + kx;
            if (iy < 0 || iy >= ih || ix < 0 || ix >= iw) continue;
            const int32_t v = asValue(*h.region(0, (iy * iw + ix) * d + ch), isSigned);
            sum += v;
            best = std::max<int64_t>(best, v);
            ++n;
          }
        }
        // Nearest, ties away from zero, in exact rational arithmetic: |sum|/n rounded half up.
        const int64_t mag = (2 * (sum < 0 ? -sum : sum) + n) / (2 * n);
        const int64_t avg = sum < 0 ? -mag : mag;
        expected[(y * nx + x) * d + ch] = refSaturate(average ? avg : best, lo, hi, isSigned);
      }
    }
  }
  expectBytes(h.region(1), expected, average ? "average pool" : "max pool");
  expectVaried(expected);
}

INSTANTIATE_TEST_SUITE_P(Modes, FuncModelPool,
                         ::testing::Values(PoolCase{false, false}, PoolCase{false, true}, PoolCase{true, false},
                                           PoolCase{true, true}));

TEST(FuncModelCommands, AveragePoolRoundsTiesAwayFromZeroOnHandComputedValues) {
  Harness h;
  const uint32_t d = h.dim;
  // Two input pixels; a 2×1 window: lane 0 {1, 2} → 1.5 → 2; lane 1 {-1, -2} → -1.5 → -2;
  // lane 2 {-1, 0} → -0.5 → -1; lane 3 {3, 4} → 3.5 → 4.
  const int8_t a[4] = {1, -1, -1, 3}, b[4] = {2, -2, 0, 4};
  for (int i = 0; i < 4; ++i) {
    *h.region(0, i) = static_cast<uint8_t>(a[i]);
    *h.region(0, d + i) = static_cast<uint8_t>(b[i]);
  }
  h.loadLines(0, 0, 0, 2, 0, L2C);
  Cmd& c = h.add(SABLE_OP_POOL, L2C, C2S);
  sable_cmd_pool_set_mode(c.data(), SABLE_POOL_MODE_AVERAGE);
  sable_cmd_pool_set_signed(c.data(), 1);
  sable_cmd_pool_set_output_addr(c.data(), 10);
  sable_cmd_pool_set_nx(c.data(), 1);
  sable_cmd_pool_set_ny(c.data(), 1);
  sable_cmd_pool_set_input_width(c.data(), 2);
  sable_cmd_pool_set_input_height(c.data(), 1);
  sable_cmd_pool_set_input_stride_x(c.data(), 1);
  sable_cmd_pool_set_kernel_w(c.data(), 2);
  sable_cmd_pool_set_kernel_h(c.data(), 1);
  sable_cmd_pool_set_stride_x(c.data(), 1);
  sable_cmd_pool_set_stride_y(c.data(), 1);
  sable_cmd_pool_set_clamp_min(c.data(), -128);
  sable_cmd_pool_set_clamp_max(c.data(), 127);
  h.storeLines(10, 1, 0, 1, C2S);
  h.end();
  expectOk(h.run());
  const std::vector<uint8_t> expected = {2, static_cast<uint8_t>(-2), static_cast<uint8_t>(-1), 4, 0};
  expectBytes(h.region(1), expected, "average of two taps");
}

struct EltwiseCase {
  uint32_t op;
  bool isSigned;
};

class FuncModelEltwise : public ::testing::TestWithParam<EltwiseCase> {};

TEST_P(FuncModelEltwise, MatchesReferenceWithParameterBlockAndBroadcast) {
  const auto [op, isSigned] = GetParam();
  Harness h;
  const uint32_t d = h.dim, count = 5;
  h.fillRandom(0, 0, 2 * count * d, 31 + op * 2 + isSigned);
  // NNAPI-like parameters: offsets are negated zero points, left shift 20 for ADD/SUB.
  const int32_t p[SABLE_ELTWISE_PARAM_WORDS] = {
      isSigned ? 3 : -128,  isSigned ? -7 : -120, isSigned ? -2 : 130,  1518500250, -1, 1195376640, -2,
      op == SABLE_ELTWISE_OP_MUL ? 1475739525 : 1717986918, op == SABLE_ELTWISE_OP_MUL ? -7 : -19, 20,
      isSigned ? -120 : 5, isSigned ? 110 : 240};
  for (uint32_t i = 0; i < SABLE_ELTWISE_PARAM_WORDS; ++i) h.putLe32(2, 4 * i, p[i]);
  h.loadLines(0, 0, 0, 2 * count, 0, 0);
  h.loadLines(100, 2, 0, sable_eltwise_param_lines(d), 0, L2C);
  Cmd& c = h.add(SABLE_OP_ELTWISE, L2C, C2S);
  sable_cmd_eltwise_set_op(c.data(), op);
  sable_cmd_eltwise_set_signed(c.data(), isSigned);
  sable_cmd_eltwise_set_input_a_addr(c.data(), 0);
  sable_cmd_eltwise_set_input_b_addr(c.data(), count);  // B: one broadcast line
  sable_cmd_eltwise_set_output_addr(c.data(), 200);
  sable_cmd_eltwise_set_count(c.data(), count);
  sable_cmd_eltwise_set_input_a_stride(c.data(), 1);
  sable_cmd_eltwise_set_input_b_stride(c.data(), 0);
  sable_cmd_eltwise_set_output_stride(c.data(), 2);
  sable_cmd_eltwise_set_param_addr(c.data(), 100);
  Cmd& s = h.add(SABLE_OP_DMA_STORE, C2S);
  sable_cmd_dma_store_set_sp_addr(s.data(), 200);
  sable_cmd_dma_store_set_region(s.data(), 1);
  sable_cmd_dma_store_set_elem_bytes(s.data(), d);
  sable_cmd_dma_store_set_nx(s.data(), 2 * count - 1);
  sable_cmd_dma_store_set_ny(s.data(), 1);
  sable_cmd_dma_store_set_nz(s.data(), 1);
  sable_cmd_dma_store_set_dram_stride_x(s.data(), d);
  h.end();
  expectOk(h.run());
  std::vector<uint8_t> expected(size_t{2 * count - 1} * d, 0);
  for (uint32_t i = 0; i < count; ++i) {
    for (uint32_t ch = 0; ch < d; ++ch) {
      const int32_t va = asValue(*h.region(0, i * d + ch), isSigned) + p[0];
      const int32_t vb = asValue(*h.region(0, count * d + ch), isSigned) + p[1];
      int32_t raw;
      if (op == SABLE_ELTWISE_OP_MUL) {
        raw = va * vb;
      } else {
        const int32_t sa = refRequantize(va * (1 << p[9]), p[3], p[4]);
        const int32_t sb = refRequantize(vb * (1 << p[9]), p[5], p[6]);
        raw = op == SABLE_ELTWISE_OP_ADD ? sa + sb : sa - sb;
      }
      expected[2 * i * d + ch] = refSaturate(int64_t{refRequantize(raw, p[7], p[8])} + p[2], p[10], p[11], isSigned);
    }
  }
  expectBytes(h.region(1), expected, "eltwise");
  expectVaried(expected);
}

INSTANTIATE_TEST_SUITE_P(Ops, FuncModelEltwise,
                         ::testing::Values(EltwiseCase{SABLE_ELTWISE_OP_ADD, false}, EltwiseCase{SABLE_ELTWISE_OP_ADD, true},
                                           EltwiseCase{SABLE_ELTWISE_OP_SUB, false}, EltwiseCase{SABLE_ELTWISE_OP_SUB, true},
                                           EltwiseCase{SABLE_ELTWISE_OP_MUL, false}, EltwiseCase{SABLE_ELTWISE_OP_MUL, true}));

TEST(FuncModelCommands, LutIndexesTheTableWithUnsignedBytes) {
  Harness h;
  const uint32_t d = h.dim, count = 3;
  for (uint32_t i = 0; i < 256; ++i) *h.region(0, i) = static_cast<uint8_t>(255 - i * 7);  // table
  h.fillRandom(0, 256, count * d, 41);
  h.loadLines(0, 0, 0, 256 / d + count, 0, L2C);
  Cmd& c = h.add(SABLE_OP_LUT, L2C, C2S);
  sable_cmd_lut_set_input_addr(c.data(), 256 / d);
  sable_cmd_lut_set_output_addr(c.data(), 100);
  sable_cmd_lut_set_count(c.data(), count);
  sable_cmd_lut_set_table_addr(c.data(), 0);
  sable_cmd_lut_set_input_stride(c.data(), 1);
  sable_cmd_lut_set_output_stride(c.data(), 1);
  h.storeLines(100, 1, 0, count, C2S);
  h.end();
  expectOk(h.run());
  std::vector<uint8_t> expected(count * d);
  for (uint32_t i = 0; i < count * d; ++i) expected[i] = static_cast<uint8_t>(255 - *h.region(0, 256 + i) * 7);
  expectBytes(h.region(1), expected, "lut");
}

// SOFTMAX with a hand-made table (T[0] = 1.0, T[1] = 0.5, every other entry 0) on rows whose
// results are worked out by hand: the Q12.19 sum of the row's T[max − x], 1/sum by the
// reference's reciprocal, times T[max − x], in 1/256 steps.
TEST(FuncModelCommands, SoftmaxNormalisesRowsOnHandComputedValues) {
  for (const bool isSigned : {false, true}) {
    Harness h;
    h.putLe32(2, 0, INT32_MAX);
    h.putLe32(2, 4, 1 << 30);
    const uint8_t rows[3][4] = {{7, 7, 7, 7}, {5, 4, 0, 0}, {200, 0, 0, 0}};
    for (uint32_t r = 0; r < 3; ++r) std::memcpy(h.region(0, r * h.dim), rows[r], 4);
    h.loadLines(100, 2, 0, 1024 / h.dim);
    h.loadLines(0, 0, 0, 3, 0, L2C);
    Cmd& c = h.add(SABLE_OP_SOFTMAX, L2C, C2S);
    sable_cmd_softmax_set_signed(c.data(), isSigned ? 1 : 0);
    sable_cmd_softmax_set_input_addr(c.data(), 0);
    sable_cmd_softmax_set_output_addr(c.data(), 10);
    sable_cmd_softmax_set_rows(c.data(), 3);
    sable_cmd_softmax_set_length(c.data(), 4);
    sable_cmd_softmax_set_input_stride(c.data(), 1);
    sable_cmd_softmax_set_output_stride(c.data(), 1);
    sable_cmd_softmax_set_input_block_stride(c.data(), 1);
    sable_cmd_softmax_set_output_block_stride(c.data(), 1);
    sable_cmd_softmax_set_table_addr(c.data(), 100);
    h.storeLines(10, 1, 0, 3, C2S);
    h.end();
    expectOk(h.run());
    // uint8: four equal values get 256/4 = 64 each. 5 4 0 0: the sum is 1 + 0.5 (T[5] = 0), 1/1.5
    // of 256 is 170.67 → 171 and half that 85.33 → 85. 200 0 0 0: 256 saturates to 255.
    // int8 (200 is −56): the same bytes less 128, except the last row, whose maximum is 0 with
    // three equal values: 85.33 → 85 → −43 each, and −56 (T[56] = 0) → −128.
    const std::vector<uint8_t> unsignedWant = {64, 64, 64, 64, 171, 85, 0, 0, 255, 0, 0, 0};
    const std::vector<int8_t> signedWant = {-64, -64, -64, -64, 43, -43, -128, -128, -128, -43, -43, -43};
    for (uint32_t r = 0; r < 3; ++r) {
      for (uint32_t k = 0; k < h.dim; ++k) {
        const uint8_t got = *h.region(1, r * h.dim + k);
        if (k >= 4) {
          EXPECT_EQ(got, 0) << "lane " << k << " of row " << r << " is beyond the row: not written";
        } else if (isSigned) {
          EXPECT_EQ(static_cast<int8_t>(got), signedWant[r * 4 + k]) << "int8 row " << r << " element " << k;
        } else {
          EXPECT_EQ(got, unsignedWant[r * 4 + k]) << "uint8 row " << r << " element " << k;
        }
      }
    }
  }
}

TEST(FuncModelCommands, SoftmaxRowsSpanBlocksAndRunInPlace) {
  // Two rows of 20 bytes: block 0 in lines 0 and 1, block 1 in lines 3 and 4 (block stride 3);
  // line 2 belongs to neither, lanes 4.. of lines 3 and 4 are beyond the rows. Twenty equal
  // values: the sum is 20 (Q12.19), 1/20 of 256 = 12.8 → 13.
  Harness h;
  h.putLe32(2, 0, INT32_MAX);
  const uint32_t d = h.dim;
  std::memset(h.region(0, 0), 9, 2 * d);
  std::memset(h.region(0, 2 * d), 0x55, d);
  for (uint32_t line = 3; line < 5; ++line) {
    std::memset(h.region(0, line * d), 77, d);  // larger than 9: a read beyond the row would win the max
    std::memset(h.region(0, line * d), 9, 20 - d);
  }
  h.loadLines(100, 2, 0, 1024 / d);
  h.loadLines(0, 0, 0, 5, 0, L2C);
  Cmd& c = h.add(SABLE_OP_SOFTMAX, L2C, C2S);
  sable_cmd_softmax_set_rows(c.data(), 2);
  sable_cmd_softmax_set_length(c.data(), 20);
  sable_cmd_softmax_set_input_stride(c.data(), 1);
  sable_cmd_softmax_set_output_stride(c.data(), 1);
  sable_cmd_softmax_set_input_block_stride(c.data(), 3);
  sable_cmd_softmax_set_output_block_stride(c.data(), 3);
  sable_cmd_softmax_set_table_addr(c.data(), 100);
  h.storeLines(0, 1, 0, 5, C2S);
  h.end();
  expectOk(h.run());
  std::vector<uint8_t> expected(5 * d);
  std::fill_n(expected.begin(), 2 * d, uint8_t{13});
  std::fill_n(expected.begin() + 2 * d, d, uint8_t{0x55});
  for (uint32_t line = 3; line < 5; ++line) {
    std::fill_n(expected.begin() + line * d, d, uint8_t{77});
    std::fill_n(expected.begin() + line * d, 20 - d, uint8_t{13});
  }
  expectBytes(h.region(1), expected, "softmax in place over two blocks");
}

// A tiled 1×1 convolution: per tile, load → MATMUL → POSTPROC → store, double-buffered with all
// four token channels so that the load of tile t+1 overlaps the compute of tile t.
TEST(FuncModelCommands, TiledConvolutionWithAllTokenChannelsMatchesReference) {
  Harness h;
  const uint32_t d = h.dim, tiles = 6, pixels = 8;
  constexpr uint32_t C2L = SABLE_DEP_COMPUTE_TO_LOAD, S2C = SABLE_DEP_STORE_TO_COMPUTE;
  h.fillRandom(0, 0, (d + tiles * pixels) * d, 51);
  putPostprocParams(h, 0, std::vector<int32_t>(d, 77), std::vector<int32_t>(d, 1300000000), std::vector<int32_t>(d, -9));
  h.loadLines(0, 0, 0, d, 0, 0);        // weights
  h.loadLines(20, 2, 0, 12, 0, 0);      // parameters
  for (uint32_t t = 0; t < tiles; ++t) {
    const uint32_t buffer = t % 2;
    // Load into a buffer once the compute that last read it has finished with it.
    h.loadLines(100 + buffer * pixels, 0, (d + t * pixels) * d, pixels, t >= 2 ? C2L : 0, L2C);
    Cmd& m = h.add(SABLE_OP_MATMUL, L2C);
    sable_cmd_matmul_set_input_signed(m.data(), 1);
    sable_cmd_matmul_set_weight_signed(m.data(), 1);
    sable_cmd_matmul_set_input_addr(m.data(), 100 + buffer * pixels);
    sable_cmd_matmul_set_acc_addr(m.data(), buffer * pixels);
    sable_cmd_matmul_set_nx(m.data(), pixels);
    sable_cmd_matmul_set_ny(m.data(), 1);
    sable_cmd_matmul_set_input_stride_x(m.data(), 1);
    // The output buffer is free again once the store of tile t-2 is done.
    addPostproc(h, buffer * pixels, 200 + buffer * pixels, pixels, 1, 20, true, 0, -128, 127, t >= 2 ? S2C : 0,
                C2S | (t + 2 < tiles ? C2L : 0));
    h.storeLines(200 + buffer * pixels, 1, t * pixels * d, pixels, C2S, t + 2 < tiles ? S2C : 0);
  }
  h.end();
  const JobResult r = h.run();
  expectOk(r);
  std::vector<uint8_t> expected(size_t{tiles} * pixels * d);
  for (uint32_t p = 0; p < tiles * pixels; ++p) {
    for (uint32_t n = 0; n < d; ++n) {
      int32_t acc = 0;
      for (uint32_t k = 0; k < d; ++k) acc += asValue(*h.region(0, (d + p) * d + k), true) * asValue(*h.region(0, k * d + n), true);
      expected[p * d + n] = refSaturate(refRequantize(acc + 77, 1300000000, -9), -128, 127, true);
    }
  }
  expectBytes(h.region(1), expected, "tiled convolution");
  expectVaried(expected);
  EXPECT_EQ(r.counters[SABLE_COUNTER_COMMANDS], h.commands.size());
}

TEST(FuncModelCommands, S8ConfigurationUsesEightLanes) {
#ifdef SABLE_COSIM_RTL
  GTEST_SKIP() << "the verilated RTL is built for s16 only (docs/rtl-verification.md)";
#endif
  Harness h(SABLE_HW_CONFIG_S8);
  ASSERT_EQ(h.dim, 8u);
  for (uint32_t i = 0; i < 256; ++i) *h.region(0, i) = static_cast<uint8_t>(i ^ 0x5A);
  for (uint32_t i = 0; i < 16; ++i) *h.region(0, 256 + i) = static_cast<uint8_t>(i * 13);
  h.loadLines(0, 0, 0, 256 / 8 + 2, 0, L2C);
  Cmd& c = h.add(SABLE_OP_LUT, L2C, C2S);
  sable_cmd_lut_set_input_addr(c.data(), 32);
  sable_cmd_lut_set_output_addr(c.data(), 50);
  sable_cmd_lut_set_count(c.data(), 2);
  sable_cmd_lut_set_input_stride(c.data(), 1);
  sable_cmd_lut_set_output_stride(c.data(), 1);
  h.storeLines(50, 1, 0, 2, C2S);
  h.end();
  const JobResult r = h.run();
  expectOk(r);
  std::vector<uint8_t> expected(16);
  for (uint32_t i = 0; i < 16; ++i) expected[i] = static_cast<uint8_t>((i * 13) ^ 0x5A);
  expectBytes(h.region(1), expected, "s8 lut");
  EXPECT_EQ(r.counters[SABLE_COUNTER_CYCLES], 4u + (32 + 34) + (32 + 2) + (32 + 2))
      << "from fetch(0) = 4: load 34 lines, LUT (32 table lines + 2), store 2 lines, in sequence";
}

}  // namespace
}  // namespace sable::sim::test
