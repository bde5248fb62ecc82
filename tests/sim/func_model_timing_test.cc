// Counters and the cycle model of docs/func-model.md, with the expected numbers worked out by
// hand from its formulas. Command i can be dispatched at fetch(i) = 2·(i + 2) on s16 (the header
// and commands 0..i over the 16-byte bus).
#include <gtest/gtest.h>

#include "func_model_harness.h"

namespace sable::sim::test {
namespace {

constexpr uint32_t L2C = SABLE_DEP_LOAD_TO_COMPUTE;
constexpr uint32_t C2S = SABLE_DEP_COMPUTE_TO_STORE;

Cmd& matmul(Harness& h, uint32_t nx, uint32_t ny, uint32_t wait = 0, uint32_t signal = 0) {
  Cmd& c = h.add(SABLE_OP_MATMUL, wait, signal);
  sable_cmd_matmul_set_nx(c.data(), nx);
  sable_cmd_matmul_set_ny(c.data(), ny);
  sable_cmd_matmul_set_input_stride_x(c.data(), 1);
  sable_cmd_matmul_set_input_stride_y(c.data(), nx);
  return c;
}

TEST(FuncModelTiming, EmptyJobCostsItsFetch) {
  Harness h;
  h.end();
  const JobResult r = h.run();
  EXPECT_EQ(r.counters[SABLE_COUNTER_COMMANDS], 1u);
  EXPECT_EQ(r.counters[SABLE_COUNTER_CYCLES], 4u) << "header and END: 64 bytes at 16 bytes/cycle";
}

TEST(FuncModelTiming, DmaCyclesAreLatencyPlusTheSlowerOfBusAndLines) {
  Harness h;
  h.loadLines(0, 0, 0, 10);  // 160 bytes = 10 beats, 10 lines: 32 + 10, from fetch(0) = 4
  h.end();
  JobResult r = h.run();
  EXPECT_EQ(r.counters[SABLE_COUNTER_CYCLES], 46u);
  EXPECT_EQ(r.counters[SABLE_COUNTER_LOAD_BUSY], 42u);
  EXPECT_EQ(r.counters[SABLE_COUNTER_DMA_READ_BYTES], 160u);

  Harness g;
  Cmd& c = g.loadLines(0, 0, 0, 100);  // 100 one-byte elements: 7 beats but 100 lines: 32 + 100
  sable_cmd_dma_load_set_elem_bytes(c.data(), 1);
  sable_cmd_dma_load_set_dram_stride_x(c.data(), 1);
  Cmd& s = g.storeLines(0, 1, 0, 3);  // 48 bytes, 3 lines: 32 + 3
  (void)s;
  g.end();
  r = g.run();
  EXPECT_EQ(r.counters[SABLE_COUNTER_LOAD_BUSY], 132u);
  EXPECT_EQ(r.counters[SABLE_COUNTER_STORE_BUSY], 35u);
  EXPECT_EQ(r.counters[SABLE_COUNTER_DMA_READ_BYTES], 100u);
  EXPECT_EQ(r.counters[SABLE_COUNTER_DMA_WRITE_BYTES], 48u);
  EXPECT_EQ(r.counters[SABLE_COUNTER_CYCLES], 4u + 132) << "load and store queues run in parallel";
}

TEST(FuncModelTiming, ABoardsMemoryIsOnePortSharedByLoadsAndStores) {
  // 8 bytes per cycle for reads and writes together: the load's 160 bytes move from 4 + 32 = 36
  // for 20 cycles (not 10 at the bus's 16 bytes/cycle).
  Harness h(SABLE_HW_CONFIG_S16, 8.0);
  h.loadLines(0, 0, 0, 10);
  h.end();
  JobResult r = h.run();
  EXPECT_EQ(r.counters[SABLE_COUNTER_CYCLES], 56u);
  EXPECT_EQ(r.counters[SABLE_COUNTER_LOAD_BUSY], 52u);

  // The port moves whole bus beats: 10 one-byte elements 32 bytes apart are 10 beats, 160 bytes
  // of the port's time (from 36 to 56), though the load reads 10 bytes.
  Harness sparse(SABLE_HW_CONFIG_S16, 8.0);
  Cmd& c = sparse.loadLines(0, 0, 0, 10);
  sable_cmd_dma_load_set_elem_bytes(c.data(), 1);
  sable_cmd_dma_load_set_dram_stride_x(c.data(), 32);
  sparse.end();
  r = sparse.run();
  EXPECT_EQ(r.counters[SABLE_COUNTER_DMA_READ_BYTES], 10u);
  EXPECT_EQ(r.counters[SABLE_COUNTER_CYCLES], 56u);

  // A store beside it (fetched at 6) gets the port when the load's bytes have moved: its 48 bytes
  // from 56 for 6 cycles; without the limit the two queues overlap and the job ends at 46.
  for (double bandwidth : {8.0, 0.0}) {
    Harness g(SABLE_HW_CONFIG_S16, bandwidth);
    g.loadLines(0, 0, 0, 10);
    g.storeLines(0, 1, 0, 3);
    g.end();
    const uint32_t size = g.writeJob();
    std::vector<uint64_t> finish;
    r = g.model->runJob(kStreamAddress, size, kTableAddress, 3, finish);
    ASSERT_EQ(r.errorCause, SABLE_ERROR_NONE);
    if (bandwidth > 0) {
      EXPECT_EQ(finish, (std::vector<uint64_t>{56, 62, 62}));
      EXPECT_EQ(r.counters[SABLE_COUNTER_STORE_BUSY], 56u);
    } else {
      EXPECT_EQ(finish, (std::vector<uint64_t>{46, 41, 46}));
    }
  }
}

TEST(FuncModelTiming, RunJobRecordsEachCommandsFinishCycle) {
  Harness h;
  h.loadLines(0, 0, 0, 10);                  // fetch(0) = 4: 4 + 32 + 10 = 46
  h.storeLines(0, 1, 0, 3);                  // fetch(1) = 6, store queue free: 6 + 32 + 3 = 41
  h.loadLines(16, 0, 160, 100, 0, 0);        // after the first load: 46 + 32 + 100 = 178
  h.end();                                   // the job's last cycle
  const uint32_t size = h.writeJob();
  std::vector<uint64_t> finish{99, 99};      // replaced, not appended to
  const JobResult r = h.model->runJob(kStreamAddress, size, kTableAddress, 3, finish);
  ASSERT_EQ(r.errorCause, SABLE_ERROR_NONE);
  EXPECT_EQ(finish, (std::vector<uint64_t>{46, 41, 178, 178}));
  EXPECT_EQ(r.counters[SABLE_COUNTER_CYCLES], 178u);

  Harness bad;
  bad.loadLines(0, 0, 0, 10);
  bad.add(SABLE_OP_MATMUL);  // zero counts: BAD_FIELD at command 1, nothing of it runs
  bad.end();
  const uint32_t badSize = bad.writeJob();
  const JobResult failed = bad.model->runJob(kStreamAddress, badSize, kTableAddress, 3, finish);
  EXPECT_EQ(failed.errorCause, SABLE_ERROR_BAD_FIELD);
  EXPECT_EQ(finish, (std::vector<uint64_t>{0, 0, 0})) << "decoding fails before anything executes";
}

TEST(FuncModelTiming, RunJobRecordsEachCommandsStartCycle) {
  Harness h;
  h.loadLines(0, 0, 0, 10);                  // from fetch(0) = 4
  h.storeLines(0, 1, 0, 3);                  // from fetch(1) = 6
  h.loadLines(16, 0, 160, 100, 0, 0);        // when the first load has freed the queue: 46
  h.end();                                   // start = finish = the job's last cycle
  const uint32_t size = h.writeJob();
  std::vector<uint64_t> start{7}, finish;
  const JobResult r = h.model->runJob(kStreamAddress, size, kTableAddress, 3, start, finish);
  ASSERT_EQ(r.errorCause, SABLE_ERROR_NONE);
  EXPECT_EQ(start, (std::vector<uint64_t>{4, 6, 46, 178}));
  EXPECT_EQ(finish, (std::vector<uint64_t>{46, 41, 178, 178}));
}

TEST(FuncModelTiming, ComputeCommandCycles) {
  Harness h;
  matmul(h, 4, 3);  // from 4: 16 weight load + 12 rows + 31 fill/drain = 59
  // 2·3·9·16 = 864 MACs / 64 = 13.5 → 14; rows 7 lines apart, so no 4 taps of one cycle share a
  // scratchpad bank (BankConflicts below)
  Cmd& dw = h.add(SABLE_OP_DEPTHWISE);
  sable_cmd_depthwise_set_nx(dw.data(), 3);
  sable_cmd_depthwise_set_ny(dw.data(), 2);
  sable_cmd_depthwise_set_input_stride_x(dw.data(), 1);
  sable_cmd_depthwise_set_input_stride_y(dw.data(), 7);
  sable_cmd_depthwise_set_kernel_w(dw.data(), 3);
  sable_cmd_depthwise_set_kernel_h(dw.data(), 3);
  for (auto set : {sable_cmd_depthwise_set_stride_x, sable_cmd_depthwise_set_stride_y, sable_cmd_depthwise_set_dilation_x,
                   sable_cmd_depthwise_set_dilation_y}) {
    set(dw.data(), 1);
  }
  Cmd& pp = h.add(SABLE_OP_POSTPROC);  // 5 lines
  sable_cmd_postproc_set_nx(pp.data(), 5);
  sable_cmd_postproc_set_ny(pp.data(), 1);
  sable_cmd_postproc_set_output_addr(pp.data(), 500);
  sable_cmd_postproc_set_output_stride_x(pp.data(), 1);
  sable_cmd_postproc_set_param_addr(pp.data(), 100);
  Cmd& pool = h.add(SABLE_OP_POOL);  // 2·2 outputs × 3·3 window = 36
  sable_cmd_pool_set_nx(pool.data(), 2);
  sable_cmd_pool_set_ny(pool.data(), 2);
  sable_cmd_pool_set_input_width(pool.data(), 4);
  sable_cmd_pool_set_input_height(pool.data(), 4);
  sable_cmd_pool_set_input_stride_x(pool.data(), 1);
  sable_cmd_pool_set_input_stride_y(pool.data(), 4);
  sable_cmd_pool_set_output_addr(pool.data(), 600);
  sable_cmd_pool_set_kernel_w(pool.data(), 3);
  sable_cmd_pool_set_kernel_h(pool.data(), 3);
  sable_cmd_pool_set_stride_x(pool.data(), 1);
  sable_cmd_pool_set_stride_y(pool.data(), 1);
  sable_cmd_pool_set_clamp_max(pool.data(), 255);
  Cmd& el = h.add(SABLE_OP_ELTWISE);  // 7 lines of 2 cycles, A (line 0) and B (line 1) in different banks
  sable_cmd_eltwise_set_count(el.data(), 7);
  sable_cmd_eltwise_set_input_b_addr(el.data(), 1);
  sable_cmd_eltwise_set_output_addr(el.data(), 700);
  sable_cmd_eltwise_set_output_stride(el.data(), 1);
  sable_cmd_eltwise_set_param_addr(el.data(), 800);
  Cmd& lut = h.add(SABLE_OP_LUT);  // 16 table lines + 3
  sable_cmd_lut_set_count(lut.data(), 3);
  sable_cmd_lut_set_output_addr(lut.data(), 900);
  sable_cmd_lut_set_output_stride(lut.data(), 1);
  sable_cmd_lut_set_table_addr(lut.data(), 1000);
  h.end();
  const JobResult r = h.run();
  ASSERT_EQ(r.errorCause, SABLE_ERROR_NONE) << sable_error_cause_name(r.errorCause) << " at " << r.errorCommand;
  EXPECT_EQ(r.counters[SABLE_COUNTER_ARRAY_BUSY], 59u);
  EXPECT_EQ(r.counters[SABLE_COUNTER_VECTOR_BUSY], 14u + 5 + 36 + 14 + 19);
  EXPECT_EQ(r.counters[SABLE_COUNTER_CYCLES], 4u + 59 + 14 + 5 + 36 + 14 + 19)
      << "one compute queue, in order; the DEPTHWISE waits for the array to drain";
  EXPECT_EQ(r.counters[SABLE_COUNTER_MACS], 12u * 256 + 864);
  EXPECT_EQ(r.counters[SABLE_COUNTER_COMMANDS], 7u);
}

// Reads of one cycle in one scratchpad bank (line mod 8) take a cycle each, as in the banked RTL.
TEST(FuncModelTiming, BankConflicts) {
  Harness h;
  // One pixel of a 3×3 kernel over rows 8 lines apart: taps at lines 0, 1, 2, 8, 9, 10, 16, 17, 18
  // (banks 0 1 2 0 1 2 0 1 2), four per cycle: {0 1 2 8} (bank 0 twice: +1), {9 10 16 17} (bank 1
  // twice: +1), {18}: 3 cycles + 2.
  Cmd& dw = h.add(SABLE_OP_DEPTHWISE);
  sable_cmd_depthwise_set_nx(dw.data(), 1);
  sable_cmd_depthwise_set_ny(dw.data(), 1);
  sable_cmd_depthwise_set_input_stride_x(dw.data(), 1);
  sable_cmd_depthwise_set_input_stride_y(dw.data(), 8);
  sable_cmd_depthwise_set_kernel_w(dw.data(), 3);
  sable_cmd_depthwise_set_kernel_h(dw.data(), 3);
  for (auto set : {sable_cmd_depthwise_set_stride_x, sable_cmd_depthwise_set_stride_y, sable_cmd_depthwise_set_dilation_x,
                   sable_cmd_depthwise_set_dilation_y}) {
    set(dw.data(), 1);
  }
  // A at lines 0..6, B at 8..14: every line's pair in one bank, 2 + 1 cycles per line.
  Cmd& el = h.add(SABLE_OP_ELTWISE);
  sable_cmd_eltwise_set_count(el.data(), 7);
  sable_cmd_eltwise_set_input_a_stride(el.data(), 1);
  sable_cmd_eltwise_set_input_b_addr(el.data(), 8);
  sable_cmd_eltwise_set_input_b_stride(el.data(), 1);
  sable_cmd_eltwise_set_output_addr(el.data(), 700);
  sable_cmd_eltwise_set_output_stride(el.data(), 1);
  sable_cmd_eltwise_set_param_addr(el.data(), 800);
  h.end();
  const JobResult r = h.run();
  ASSERT_EQ(r.errorCause, SABLE_ERROR_NONE) << sable_error_cause_name(r.errorCause) << " at " << r.errorCommand;
  EXPECT_EQ(r.counters[SABLE_COUNTER_VECTOR_BUSY], (3u + 2) + 7 * 3);
}

TEST(FuncModelTiming, SoftmaxIsThreePassesPerRowPlusTheReciprocalAndTheTableLoad) {
  // 3 rows of 40 bytes: 64 table lines + 3 · (3 · 40 + 16) = 472 cycles on s16 (three passes of
  // a byte per cycle and the reciprocal), from fetch(0) = 4. On s8 the table is 128 lines:
  // 128 + 3 · (120 + 16).
  for (const auto& [configIndex, cycles] : {std::pair{SABLE_HW_CONFIG_S16, 472u}, std::pair{SABLE_HW_CONFIG_S8, 536u}}) {
    Harness h(configIndex);
    Cmd& c = h.add(SABLE_OP_SOFTMAX);
    sable_cmd_softmax_set_output_addr(c.data(), 500);
    sable_cmd_softmax_set_rows(c.data(), 3);
    sable_cmd_softmax_set_length(c.data(), 40);
    sable_cmd_softmax_set_input_stride(c.data(), 5);
    sable_cmd_softmax_set_output_stride(c.data(), 5);
    sable_cmd_softmax_set_input_block_stride(c.data(), 1);
    sable_cmd_softmax_set_output_block_stride(c.data(), 1);
    sable_cmd_softmax_set_table_addr(c.data(), 1000);
    h.end();
    const JobResult r = h.run();
    ASSERT_EQ(r.errorCause, SABLE_ERROR_NONE) << sable_error_cause_name(r.errorCause) << " at " << r.errorCommand;
    EXPECT_EQ(r.counters[SABLE_COUNTER_VECTOR_BUSY], cycles) << "array_dim " << h.dim;
    EXPECT_EQ(r.counters[SABLE_COUNTER_CYCLES], 4u + cycles) << "array_dim " << h.dim;
  }
}

TEST(FuncModelTiming, TokensSerializeAndCountStalls) {
  Harness h;
  h.loadLines(0, 0, 0, 10, 0, L2C);  // dispatched 4: 4 → 46
  matmul(h, 4, 3, L2C, C2S);          // dispatched 6, token at 46: 46 → 105 (results)
  h.storeLines(0, 1, 0, 2, C2S);      // dispatched 8, token at 105: 105 → 139
  h.end();
  const JobResult r = h.run();
  EXPECT_EQ(r.counters[SABLE_COUNTER_CYCLES], 139u);
  EXPECT_EQ(r.counters[SABLE_COUNTER_COMPUTE_STALL], 40u);
  EXPECT_EQ(r.counters[SABLE_COUNTER_STORE_STALL], 97u);
  EXPECT_EQ(r.counters[SABLE_COUNTER_LOAD_STALL], 0u);
}

TEST(FuncModelTiming, OverlappingQueuesTakeFewerCyclesThanTheSum) {
  Harness h;
  for (int t = 0; t < 4; ++t) {
    h.loadLines(t * 10, 0, 0, 10, 0, L2C);
    matmul(h, 4, 3, L2C);
  }
  h.end();
  const JobResult r = h.run();
  // Loads end at 46, 88, 130, 172. Each MATMUL (12 rows < 16: no preload) occupies the array
  // 16 + 12 cycles from its load's end and completes 31 cycles later: 46 → 105, 88 → 147,
  // 130 → 189, 172 → 231; the array is busy from 46 to 231 without a gap.
  EXPECT_EQ(r.counters[SABLE_COUNTER_CYCLES], 231u);
  EXPECT_EQ(r.counters[SABLE_COUNTER_LOAD_BUSY], 4u * 42);
  EXPECT_EQ(r.counters[SABLE_COUNTER_ARRAY_BUSY], 231u - 46);
  const uint64_t sum = r.counters[SABLE_COUNTER_LOAD_BUSY] + r.counters[SABLE_COUNTER_ARRAY_BUSY];
  EXPECT_LT(r.counters[SABLE_COUNTER_CYCLES], sum);
  // Waiting for data: 46 − 6 for the first MATMUL, then 88 − 74, 130 − 116, 172 − 158.
  EXPECT_EQ(r.counters[SABLE_COUNTER_COMPUTE_STALL], 40u + 3 * 14);
}

TEST(FuncModelTiming, BackToBackMatmulsHideWeightLoadAndDrain) {
  Harness h;
  for (int i = 0; i < 3; ++i) matmul(h, 8, 4);  // 32 rows each
  h.end();
  const JobResult r = h.run();
  // The first loads its weights (4 → 20) and streams (→ 52); the next two had theirs preloaded
  // while the previous one streamed: 52 → 84, 84 → 116; the last results land 31 cycles later.
  EXPECT_EQ(r.counters[SABLE_COUNTER_CYCLES], 116u + 31);
  EXPECT_EQ(r.counters[SABLE_COUNTER_ARRAY_BUSY], 147u - 4);
  EXPECT_EQ(r.counters[SABLE_COUNTER_MACS], 3u * 32 * 256);
}

Cmd& postproc(Harness& h, uint32_t accAddr, uint32_t nx, uint32_t ny, uint32_t outputAddr) {
  Cmd& c = h.add(SABLE_OP_POSTPROC);
  sable_cmd_postproc_set_acc_addr(c.data(), accAddr);
  sable_cmd_postproc_set_nx(c.data(), nx);
  sable_cmd_postproc_set_ny(c.data(), ny);
  sable_cmd_postproc_set_output_addr(c.data(), outputAddr);
  sable_cmd_postproc_set_output_stride_x(c.data(), 1);
  sable_cmd_postproc_set_output_stride_y(c.data(), nx);
  sable_cmd_postproc_set_param_addr(c.data(), 100);
  return c;
}

// Two steps of a convolution: MATMUL into the accumulator, POSTPROC out of it.
uint64_t twoStepCycles(uint32_t secondAccAddr) {
  Harness h;
  matmul(h, 8, 4);                           // 32 rows into accumulator rows 0..31
  postproc(h, 0, 8, 4, 500);
  Cmd& m = matmul(h, 8, 4);                  // reads lines 0..31 and weights 0..15
  sable_cmd_matmul_set_acc_addr(m.data(), secondAccAddr);
  postproc(h, secondAccAddr, 8, 4, 600);
  h.end();
  const JobResult r = h.run();
  EXPECT_EQ(r.errorCause, SABLE_ERROR_NONE) << sable_error_cause_name(r.errorCause) << " at " << r.errorCommand;
  EXPECT_EQ(r.counters[SABLE_COUNTER_VECTOR_BUSY], 64u) << "two POSTPROCs of 32 rows";
  return r.counters[SABLE_COUNTER_CYCLES];
}

TEST(FuncModelTiming, PostprocOverlapsTheNextMatmulsOnTheOtherAccumulatorRows) {
  // MATMUL 0: weights 4 → 20, rows → 52, results at 83. POSTPROC 1 is issued at 52 (the compute
  // queue goes on at 53) and runs 83 → 115 once the rows have drained. MATMUL 2 writes rows
  // 32..63, which the POSTPROC does not read: it streams 53 → 85 with its weights preloaded
  // (the prefetcher looks past the POSTPROC), results at 116. POSTPROC 3 is issued when the unit
  // is free (115) and runs from 116 to 148.
  EXPECT_EQ(twoStepCycles(32), 148u);
  // Into rows 0..31 again, MATMUL 2 must wait for POSTPROC 1 to have read them: 115 → 147,
  // results at 178; POSTPROC 3 is issued at 147 and runs 178 → 210.
  EXPECT_EQ(twoStepCycles(0), 210u);
}

TEST(FuncModelTiming, ComputeTokensAreGivenInIssueOrder) {
  // A MATMUL issued after a POSTPROC does not signal before that POSTPROC's results exist: the
  // store waiting for the MATMUL's token also sees the POSTPROC's output.
  Harness h;
  matmul(h, 8, 4);                   // results at 83
  postproc(h, 0, 8, 4, 500);         // 83 → 115
  // One row into row 32, issued at 53 with its weights preloaded (the first MATMUL streamed 32
  // rows): 53 → 54, results at 85.
  Cmd& m = matmul(h, 1, 1, 0, C2S);
  sable_cmd_matmul_set_acc_addr(m.data(), 32);
  h.storeLines(500, 1, 0, 2, C2S);   // the token carries max(85, 115) = 115: 115 → 149
  h.end();
  const JobResult r = h.run();
  ASSERT_EQ(r.errorCause, SABLE_ERROR_NONE) << sable_error_cause_name(r.errorCause) << " at " << r.errorCommand;
  EXPECT_EQ(r.counters[SABLE_COUNTER_CYCLES], 149u);
}

TEST(FuncModelTiming, SyncOrdersTheNextLoadAfterTheStore) {
  constexpr uint32_t S2C = SABLE_DEP_STORE_TO_COMPUTE;
  constexpr uint32_t C2L = SABLE_DEP_COMPUTE_TO_LOAD;
  Harness h;
  for (uint32_t i = 0; i < 64; ++i) *h.region(0, i) = static_cast<uint8_t>(i + 1);
  h.loadLines(0, 0, 0, 4);                  // dispatched 4: 4 → 40
  h.storeLines(0, 1, 0, 4, 0, S2C);         // dispatched 6 (reads stale lines: no token): 6 → 42
  h.add(SABLE_OP_SYNC, S2C, C2L);           // dispatched 8, token at 42: 42 → 42
  h.loadLines(10, 1, 0, 4, C2L);            // dispatched 10, waits for the SYNC: 42 → 78
  h.storeLines(10, 1, 64, 4);               // 12 → 48: runs before the second load (no token)
  h.end();
  const JobResult r = h.run();
  ASSERT_EQ(r.errorCause, SABLE_ERROR_NONE) << sable_error_cause_name(r.errorCause) << " at " << r.errorCommand;
  EXPECT_EQ(r.counters[SABLE_COUNTER_CYCLES], 78u);
  EXPECT_EQ(r.counters[SABLE_COUNTER_LOAD_STALL], 42u - 40) << "the second load waited for the barrier";
  EXPECT_EQ(r.counters[SABLE_COUNTER_COMMANDS], 6u);
}

TEST(FuncModelTiming, TheDispatcherStallsOnAFullQueue) {
  const auto cyclesWith = [](int matmuls) {
    Harness h;
    for (int i = 0; i < matmuls; ++i) matmul(h, 4, 3);
    h.loadLines(0, 0, 0, 1000);  // 32 + 1000
    h.end();
    return h.run().counters[SABLE_COUNTER_CYCLES];
  };
  EXPECT_EQ(cyclesWith(8), 20u + 1032) << "eight MATMULs fit the queue: the load starts when fetched";
  // Each MATMUL occupies the array 28 cycles from 4: the 9th enters when the 1st leaves (32),
  // the 10th when the 2nd leaves (60); the load behind them is dispatched at 60.
  EXPECT_EQ(cyclesWith(10), 60u + 1032);
}

TEST(FuncModelTiming, TiesGoLoadThenComputeThenStore) {
  // All three heads can start at cycle 0. Functionally, the LUT reads line 0 only after the
  // load wrote it and the store writes the LUT's output: the tie order decides the bytes.
  Harness h;
  const uint32_t d = h.dim;
  for (uint32_t i = 0; i < 256; ++i) *h.region(0, i) = static_cast<uint8_t>(i + 1);  // table T[u] = u + 1
  *h.region(0, 256) = 9;
  h.loadLines(0, 0, 0, 256 / d + 1);
  Cmd& c = h.add(SABLE_OP_LUT);
  sable_cmd_lut_set_input_addr(c.data(), 256 / d);
  sable_cmd_lut_set_output_addr(c.data(), 100);
  sable_cmd_lut_set_count(c.data(), 1);
  h.storeLines(100, 1, 0, 1);
  h.end();
  ASSERT_EQ(h.run().errorCause, SABLE_ERROR_NONE);
  EXPECT_EQ(*h.region(1), 10) << "load, then LUT, then store";
}

}  // namespace
}  // namespace sable::sim::test
