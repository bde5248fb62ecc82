// Random command streams on the RTL against the functional model (docs/rtl-verification.md, "Verification").
// A seeded generator writes only valid programs: every field in range and in bounds, and the
// dependency tokens of a double-buffered pipeline, so the load, compute and store queues overlap
// without racing: step k loads into input buffer k%2 (waiting for the compute of step k−2 to have
// read it), computes from it into output buffer k%2 and accumulator half k%2 (waiting for the
// load of step k and the store of step k−2), and stores the output buffer. Each step's compute is
// one of MATMUL chains + POSTPROC, DEPTHWISE + POSTPROC, POOL, ELTWISE, LUT, SOFTMAX, with random
// shapes, strides, zero points and types; loads and stores add random 3-D strided shapes.
#include <random>

#include <gtest/gtest.h>

#include "func_model_harness.h"
#include "sable/sim/cosim.h"

namespace sable::sim::test {
namespace {

constexpr uint32_t L2C = SABLE_DEP_LOAD_TO_COMPUTE, C2L = SABLE_DEP_COMPUTE_TO_LOAD;
constexpr uint32_t C2S = SABLE_DEP_COMPUTE_TO_STORE, S2C = SABLE_DEP_STORE_TO_COMPUTE;

// Scratchpad plan (s16: 16384 lines): input buffers, output buffers, the parameter area.
constexpr uint32_t kInput[2] = {0, 2048};
constexpr uint32_t kOutput[2] = {4096, 6144};
constexpr uint32_t kBufferLines = 2048;
constexpr uint32_t kParams = 12000;          // POSTPROC block (12 lines)
constexpr uint32_t kEltwiseParams = 12016;   // 3 lines
constexpr uint32_t kLutTable = 12032;        // 16 lines
constexpr uint32_t kSoftmaxTable = 12048;    // 64 lines
constexpr uint32_t kParamLines = 112;
constexpr uint32_t kAccHalf = 512;           // rows per accumulator half

class Generator {
 public:
  Generator(Harness& h, uint32_t seed) : h_(h), rng_(seed) {}

  uint32_t pick(uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng_); }
  int32_t pickSigned(int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi)(rng_); }
  bool coin() { return pick(0, 1) == 1; }

  void program(uint32_t steps) {
    fillData();
    // The parameter area, then a SYNC that takes its token, so each step's compute takes one.
    Cmd& params = h_.loadLines(kParams, 2, 0, kParamLines, 0, L2C);
    (void)params;
    h_.add(SABLE_OP_SYNC, L2C, 0);
    for (uint32_t k = 0; k < steps; ++k) step(k);
    h_.end();
  }

 private:
  void fillData() {
    h_.fillRandom(0, 0, kRegionBytes, pick(0, 1 << 30));
    // POSTPROC: bias, multiplier, shift per lane (shifts in range: the generator is valid).
    for (uint32_t c = 0; c < 16; ++c) {
      h_.putLe32(2, 4 * c, pickSigned(-200000, 200000));
      h_.putLe32(2, 64 + 4 * c, pickSigned(1 << 30, INT32_MAX));
      h_.putLe32(2, 128 + 4 * c, pickSigned(-14, 1));
    }
    // ELTWISE: offsets, multipliers and shifts of NNAPI-like rescaling, then the clamps.
    const int32_t e[12] = {pickSigned(-255, 255), pickSigned(-255, 255), pickSigned(-128, 127),
                           pickSigned(1 << 30, INT32_MAX), pickSigned(-4, 0), pickSigned(1 << 30, INT32_MAX),
                           pickSigned(-4, 0), pickSigned(1 << 30, INT32_MAX), pickSigned(-24, -16), 20,
                           -128, 255};
    for (int i = 0; i < 12; ++i) h_.putLe32(2, 16 * 16 + 4 * i, e[i]);
    h_.fillRandom(2, 32 * 16, 256, pick(0, 1 << 30));  // LUT
    for (uint32_t d = 0; d < 256; ++d) {                 // SOFTMAX: decreasing Q0.31 values, some 0
      const double v = d > 200 ? 0.0 : std::exp(-0.04 * d) * 2147483647.0;
      h_.putLe32(2, 48 * 16 + 4 * d, static_cast<int32_t>(v));
    }
  }

  // Loads `lines` lines into [sp, sp + lines): densely, sometimes followed by a random 3-D
  // strided shape with repeat and padding over a prefix. The last load signals `signal`.
  void load(uint32_t sp, uint32_t lines, uint32_t wait, uint32_t signal) {
    const bool shaped = coin();
    h_.loadLines(sp, 0, pick(0, 4096) * 16, lines, wait, shaped ? 0 : signal);
    if (!shaped) return;
    Cmd& c = h_.add(SABLE_OP_DMA_LOAD, 0, signal);
    const uint32_t eb = pick(1, 16), rep = pick(1, 16 / eb);
    const uint32_t nx = pick(1, 8), ny = pick(1, 4), nz = pick(1, 3);
    const uint32_t pl = pick(0, 2), pr = pick(0, 2), pt = pick(0, 1), pb = pick(0, 1);
    sable_cmd_dma_load_set_sp_addr(c.data(), sp);
    sable_cmd_dma_load_set_region(c.data(), 0);
    sable_cmd_dma_load_set_dram_offset(c.data(), pick(0, 100000));
    sable_cmd_dma_load_set_elem_bytes(c.data(), eb);
    sable_cmd_dma_load_set_repeat(c.data(), rep);
    sable_cmd_dma_load_set_pad_value(c.data(), pick(0, 255));
    sable_cmd_dma_load_set_nx(c.data(), nx);
    sable_cmd_dma_load_set_ny(c.data(), ny);
    sable_cmd_dma_load_set_nz(c.data(), nz);
    sable_cmd_dma_load_set_pad_left(c.data(), pl);
    sable_cmd_dma_load_set_pad_right(c.data(), pr);
    sable_cmd_dma_load_set_pad_top(c.data(), pt);
    sable_cmd_dma_load_set_pad_bottom(c.data(), pb);
    sable_cmd_dma_load_set_dram_stride_x(c.data(), pick(0, 40));
    sable_cmd_dma_load_set_dram_stride_y(c.data(), pick(0, 400));
    sable_cmd_dma_load_set_dram_stride_z(c.data(), pick(0, 4000));
  }

  // Stores [sp, sp + lines) densely to region 1, sometimes also a strided shape of a prefix.
  void store(uint32_t sp, uint32_t lines, uint32_t k, uint32_t signal) {
    const bool shaped = coin();
    h_.storeLines(sp, 1, (k % 8) * 0x8000, lines, C2S, shaped ? 0 : signal);
    if (!shaped) return;
    Cmd& c = h_.add(SABLE_OP_DMA_STORE, 0, signal);
    const uint32_t eb = pick(1, 16), nx = pick(1, 6), ny = pick(1, 3), nz = pick(1, 2);
    sable_cmd_dma_store_set_sp_addr(c.data(), sp);
    sable_cmd_dma_store_set_region(c.data(), 1);
    sable_cmd_dma_store_set_dram_offset(c.data(), 0x40000 + pick(0, 60000));
    sable_cmd_dma_store_set_elem_bytes(c.data(), eb);
    sable_cmd_dma_store_set_nx(c.data(), nx);
    sable_cmd_dma_store_set_ny(c.data(), ny);
    sable_cmd_dma_store_set_nz(c.data(), nz);
    sable_cmd_dma_store_set_dram_stride_x(c.data(), pick(eb, 40));
    sable_cmd_dma_store_set_dram_stride_y(c.data(), pick(240, 400));
    sable_cmd_dma_store_set_dram_stride_z(c.data(), pick(1200, 2000));
  }

  void step(uint32_t k) {
    const uint32_t in = kInput[k % 2], out = kOutput[k % 2], acc = (k % 2) * kAccHalf;
    load(in, kBufferLines, k >= 2 ? C2L : 0, L2C);
    const uint32_t first = L2C | (k >= 2 ? S2C : 0);  // the first compute command waits
    uint32_t outLines = 0;
    switch (pick(0, 5)) {
      case 0: outLines = matmuls(in, out, acc, first); break;
      case 1: outLines = depthwise(in, out, acc, first); break;
      case 2: outLines = pool(in, out, first); break;
      case 3: outLines = eltwise(in, out, first); break;
      case 4: outLines = lut(in, out, first); break;
      default: outLines = softmax(in, out, first); break;
    }
    store(out, outLines, k, S2C);
  }

  // The last compute command of a step signals the store and frees the input buffer.
  static constexpr uint32_t kLast = C2S | C2L;

  uint32_t postproc(uint32_t acc, uint32_t out, uint32_t pixels, uint32_t signal) {
    Cmd& c = h_.add(SABLE_OP_POSTPROC, 0, signal);
    const bool isSigned = coin();
    sable_cmd_postproc_set_output_signed(c.data(), isSigned);
    sable_cmd_postproc_set_acc_addr(c.data(), acc);
    sable_cmd_postproc_set_output_addr(c.data(), out);
    sable_cmd_postproc_set_nx(c.data(), pixels);
    sable_cmd_postproc_set_ny(c.data(), 1);
    sable_cmd_postproc_set_output_stride_x(c.data(), 1);
    sable_cmd_postproc_set_param_addr(c.data(), kParams);
    sable_cmd_postproc_set_output_zero_point(c.data(), pickSigned(-20, 20) + (isSigned ? 0 : 128));
    const int32_t lo = isSigned ? pickSigned(-128, 0) : pickSigned(0, 128);
    sable_cmd_postproc_set_clamp_min(c.data(), lo);
    sable_cmd_postproc_set_clamp_max(c.data(), lo + pickSigned(0, 255));
    return pixels;
  }

  uint32_t matmuls(uint32_t in, uint32_t out, uint32_t acc, uint32_t wait) {
    const uint32_t nx = pick(1, 24), ny = pick(1, 16), sx = pick(0, 2), sy = pick(0, 40);
    const uint32_t chain = pick(1, 4);
    for (uint32_t i = 0; i < chain; ++i) {
      Cmd& c = h_.add(SABLE_OP_MATMUL, i == 0 ? wait : 0, 0);
      sable_cmd_matmul_set_accumulate(c.data(), i == 0 ? coin() : 1);
      sable_cmd_matmul_set_input_signed(c.data(), coin());
      sable_cmd_matmul_set_weight_signed(c.data(), coin());
      sable_cmd_matmul_set_weight_addr(c.data(), in + pick(0, 1000));
      sable_cmd_matmul_set_input_addr(c.data(), in + pick(0, 300));
      sable_cmd_matmul_set_acc_addr(c.data(), acc);
      sable_cmd_matmul_set_nx(c.data(), nx);
      sable_cmd_matmul_set_ny(c.data(), ny);
      sable_cmd_matmul_set_input_stride_x(c.data(), sx);
      sable_cmd_matmul_set_input_stride_y(c.data(), sy);
      sable_cmd_matmul_set_input_zero_point(c.data(), pickSigned(-300, 300));
      sable_cmd_matmul_set_weight_zero_point(c.data(), pickSigned(-300, 300));
    }
    return postproc(acc, out, nx * ny, kLast);
  }

  uint32_t depthwise(uint32_t in, uint32_t out, uint32_t acc, uint32_t wait) {
    const uint32_t kw = pick(1, 4), kh = pick(1, 4), nx = pick(1, 12), ny = pick(1, 8);
    const uint32_t sx = pick(1, 2), sy = pick(1, 2), dx = pick(1, 2), dy = pick(1, 2);
    const uint32_t width = (nx - 1) * sx + (kw - 1) * dx + 1;
    Cmd& c = h_.add(SABLE_OP_DEPTHWISE, wait, 0);
    sable_cmd_depthwise_set_accumulate(c.data(), coin());
    sable_cmd_depthwise_set_input_signed(c.data(), coin());
    sable_cmd_depthwise_set_weight_signed(c.data(), coin());
    sable_cmd_depthwise_set_weight_addr(c.data(), in + 1500 + pick(0, 100));
    sable_cmd_depthwise_set_input_addr(c.data(), in + pick(0, 100));
    sable_cmd_depthwise_set_acc_addr(c.data(), acc);
    sable_cmd_depthwise_set_nx(c.data(), nx);
    sable_cmd_depthwise_set_ny(c.data(), ny);
    sable_cmd_depthwise_set_input_stride_x(c.data(), 1);
    sable_cmd_depthwise_set_input_stride_y(c.data(), width + pick(0, 3));
    sable_cmd_depthwise_set_input_zero_point(c.data(), pickSigned(-300, 300));
    sable_cmd_depthwise_set_weight_zero_point(c.data(), pickSigned(-300, 300));
    sable_cmd_depthwise_set_kernel_w(c.data(), kw);
    sable_cmd_depthwise_set_kernel_h(c.data(), kh);
    sable_cmd_depthwise_set_stride_x(c.data(), sx);
    sable_cmd_depthwise_set_stride_y(c.data(), sy);
    sable_cmd_depthwise_set_dilation_x(c.data(), dx);
    sable_cmd_depthwise_set_dilation_y(c.data(), dy);
    return postproc(acc, out, nx * ny, kLast);
  }

  uint32_t pool(uint32_t in, uint32_t out, uint32_t wait) {
    const uint32_t kw = pick(1, 4), kh = pick(1, 4), sx = pick(1, 3), sy = pick(1, 3);
    const uint32_t pl = pick(0, kw - 1), pt = pick(0, kh - 1);
    const uint32_t iw = pick(1, 20), ih = pick(1, 12);
    // Every window must reach an input pixel: the last window starts inside the input.
    const uint32_t nx = (iw - 1 + pl) / sx + 1, ny = (ih - 1 + pt) / sy + 1;
    Cmd& c = h_.add(SABLE_OP_POOL, wait, kLast);
    sable_cmd_pool_set_mode(c.data(), coin());
    const bool isSigned = coin();
    sable_cmd_pool_set_signed(c.data(), isSigned);
    sable_cmd_pool_set_input_addr(c.data(), in + pick(0, 100));
    sable_cmd_pool_set_output_addr(c.data(), out);
    sable_cmd_pool_set_nx(c.data(), nx);
    sable_cmd_pool_set_ny(c.data(), ny);
    sable_cmd_pool_set_input_width(c.data(), iw);
    sable_cmd_pool_set_input_height(c.data(), ih);
    sable_cmd_pool_set_input_stride_x(c.data(), 1);
    sable_cmd_pool_set_input_stride_y(c.data(), iw + pick(0, 2));
    sable_cmd_pool_set_output_stride_x(c.data(), 1);
    sable_cmd_pool_set_output_stride_y(c.data(), nx);
    sable_cmd_pool_set_kernel_w(c.data(), kw);
    sable_cmd_pool_set_kernel_h(c.data(), kh);
    sable_cmd_pool_set_stride_x(c.data(), sx);
    sable_cmd_pool_set_stride_y(c.data(), sy);
    sable_cmd_pool_set_pad_left(c.data(), pl);
    sable_cmd_pool_set_pad_top(c.data(), pt);
    const int32_t lo = isSigned ? pickSigned(-128, 0) : pickSigned(0, 100);
    sable_cmd_pool_set_clamp_min(c.data(), lo);
    sable_cmd_pool_set_clamp_max(c.data(), lo + pickSigned(0, 255));
    return nx * ny;
  }

  uint32_t eltwise(uint32_t in, uint32_t out, uint32_t wait) {
    const uint32_t count = pick(1, 200);
    Cmd& c = h_.add(SABLE_OP_ELTWISE, wait, kLast);
    sable_cmd_eltwise_set_op(c.data(), pick(0, 2));
    sable_cmd_eltwise_set_signed(c.data(), coin());
    sable_cmd_eltwise_set_input_a_addr(c.data(), in + pick(0, 500));
    sable_cmd_eltwise_set_input_b_addr(c.data(), in + pick(0, 500));
    sable_cmd_eltwise_set_output_addr(c.data(), out);
    sable_cmd_eltwise_set_count(c.data(), count);
    sable_cmd_eltwise_set_input_a_stride(c.data(), pick(0, 3));
    sable_cmd_eltwise_set_input_b_stride(c.data(), pick(0, 3));
    sable_cmd_eltwise_set_output_stride(c.data(), 1);
    sable_cmd_eltwise_set_param_addr(c.data(), kEltwiseParams);
    return count;
  }

  uint32_t lut(uint32_t in, uint32_t out, uint32_t wait) {
    const uint32_t count = pick(1, 300);
    Cmd& c = h_.add(SABLE_OP_LUT, wait, kLast);
    sable_cmd_lut_set_input_addr(c.data(), in + pick(0, 500));
    sable_cmd_lut_set_output_addr(c.data(), out);
    sable_cmd_lut_set_count(c.data(), count);
    sable_cmd_lut_set_table_addr(c.data(), kLutTable);
    sable_cmd_lut_set_input_stride(c.data(), pick(0, 3));
    sable_cmd_lut_set_output_stride(c.data(), 1);
    return count;
  }

  uint32_t softmax(uint32_t in, uint32_t out, uint32_t wait) {
    const uint32_t rows = pick(1, 12), length = pick(1, 70), blocks = (length + 15) / 16;
    Cmd& c = h_.add(SABLE_OP_SOFTMAX, wait, kLast);
    sable_cmd_softmax_set_signed(c.data(), coin());
    sable_cmd_softmax_set_input_addr(c.data(), in + pick(0, 500));
    sable_cmd_softmax_set_output_addr(c.data(), out);
    sable_cmd_softmax_set_rows(c.data(), rows);
    sable_cmd_softmax_set_length(c.data(), length);
    sable_cmd_softmax_set_input_stride(c.data(), blocks + pick(0, 2));
    sable_cmd_softmax_set_output_stride(c.data(), blocks);
    sable_cmd_softmax_set_input_block_stride(c.data(), 1);
    sable_cmd_softmax_set_output_block_stride(c.data(), 1);
    sable_cmd_softmax_set_table_addr(c.data(), kSoftmaxTable);
    return rows * blocks;
  }

  Harness& h_;
  std::mt19937 rng_;
};

class CosimRandom : public ::testing::TestWithParam<uint32_t> {};

TEST_P(CosimRandom, ValidProgramAgreesWithTheFunctionalModel) {
  Harness h;
  Generator g(h, GetParam());
  g.program(8);
  const uint32_t size = h.writeJob();
  const CosimReport report = cosimulate(h.config, h.memory, {kStreamAddress, size, kTableAddress, 3});
  ASSERT_EQ(report.model.errorCause, SABLE_ERROR_NONE)
      << "the generator wrote an invalid program: " << sable_error_cause_name(report.model.errorCause)
      << " at command " << report.model.errorCommand;
  EXPECT_TRUE(report.match) << "seed " << GetParam() << ": " << report.mismatch;
}

INSTANTIATE_TEST_SUITE_P(Seeds, CosimRandom, ::testing::Range(1u, 41u));

}  // namespace
}  // namespace sable::sim::test
