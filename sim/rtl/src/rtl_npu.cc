// RtlNpu: the cycle loop around the verilated sable_npu (see the header and docs/rtl.md).
#include "sable/sim/rtl_npu.h"

#include <stdexcept>

#include "Vsable_npu.h"
#include "verilated.h"
#if VM_TRACE_FST
#include "verilated_fst_c.h"
#endif

namespace sable::sim {

struct RtlNpu::Impl {
  Impl(DeviceMemory mem, RtlNpuOptions opts)
      : options(std::move(opts)),
        axi(std::span<uint8_t>(mem.data, mem.size), 0, options.memory) {
    context = std::make_unique<VerilatedContext>();
    context->randReset(0);  // deterministic: no random initial values
    top = std::make_unique<Vsable_npu>(context.get(), "npu");
    if (!options.traceFile.empty()) {
#if VM_TRACE_FST
      context->traceEverOn(true);
      trace = std::make_unique<VerilatedFstC>();
      top->trace(trace.get(), 99);
#else
      throw std::runtime_error("this build has no waveform tracing: configure with -DSABLE_RTL_TRACE=ON");
#endif
    }
    if (options.traceFromReset) jobStarted = true;  // the window counts from cycle 0
    applyReset(4);
  }
  void applyReset(uint64_t resetCycles) {
    top->rst_n = 0;
    for (uint64_t i = 0; i < resetCycles; ++i) step();
    top->rst_n = 1;
    step();
  }
  ~Impl() {
#if VM_TRACE_FST
    if (trace) trace->close();
#endif
    top->final();
  }

  // One clock cycle (AxiMemory's protocol: drive the slave outputs, settle the low phase, let the
  // memory take this cycle's handshakes, then the rising edge).
  void lowPhase() {
    const AxiSlaveOut& s = axi.outputs();
    top->m_arready = s.arready;
    top->m_rvalid = s.rvalid;
    top->m_rid = s.rid & 0xF;
    axiBytesToWide(top->m_rdata, s.rdata.data(), 16);
    top->m_rresp = s.rresp;
    top->m_rlast = s.rlast;
    top->m_awready = s.awready;
    top->m_wready = s.wready;
    top->m_bvalid = s.bvalid;
    top->m_bid = s.bid & 0xF;
    top->m_bresp = s.bresp;
    top->clk = 0;
    top->eval();
    dump();
    if (finish != nullptr) recordCompletions();
  }
  // The completion trace port: bit q of retire_valid says command retire_index[q] completed.
  void recordCompletions() {
    const uint32_t valid = top->retire_valid;
    for (uint32_t q = 0; q < 4; ++q) {
      if ((valid >> q & 1u) == 0) continue;
      const uint32_t index = top->retire_index[q];
      if (index < finish->size()) (*finish)[index] = cycles - jobStart;
    }
  }
  void highPhase() {
    AxiMasterOut m;
    m.arvalid = top->m_arvalid;
    m.araddr = top->m_araddr;
    m.arlen = top->m_arlen;
    m.arsize = top->m_arsize;
    m.arburst = top->m_arburst;
    m.arid = top->m_arid;
    m.rready = top->m_rready;
    m.awvalid = top->m_awvalid;
    m.awaddr = top->m_awaddr;
    m.awlen = top->m_awlen;
    m.awsize = top->m_awsize;
    m.awburst = top->m_awburst;
    m.awid = top->m_awid;
    m.wvalid = top->m_wvalid;
    axiBytesFromWide(top->m_wdata, m.wdata.data(), 16);
    m.wstrb = top->m_wstrb;
    m.wlast = top->m_wlast;
    m.bready = top->m_bready;
    axi.tick(m);
    top->clk = 1;
    top->eval();
    context->timeInc(1);
    ++cycles;
    dump();
    context->timeInc(1);
  }
  void step() {
    lowPhase();
    highPhase();
  }
  void dump() {
#if VM_TRACE_FST
    if (!trace) return;
    // The window counts cycles of the job (from START); register accesses before it are not traced.
    const bool inWindow = jobStarted && cycles - jobStart >= options.traceFrom && cycles - jobStart <= options.traceTo;
    if (inWindow && !traceOpen) {
      trace->open(options.traceFile.c_str());
      traceOpen = true;
    }
    if (inWindow) trace->dump(context->time());
#endif
  }

  RtlNpuOptions options;
  AxiMemory axi;
  std::unique_ptr<VerilatedContext> context;
  std::unique_ptr<Vsable_npu> top;
#if VM_TRACE_FST
  std::unique_ptr<VerilatedFstC> trace;
  bool traceOpen = false;
#endif
  uint64_t cycles = 0;
  std::vector<uint64_t>* finish = nullptr;  // runJob's per-command record, while it runs
  uint64_t jobStart = 0;
  bool jobStarted = false;
};

RtlNpu::RtlNpu(DeviceMemory memory, RtlNpuOptions options) : impl_(std::make_unique<Impl>(memory, std::move(options))) {}
RtlNpu::~RtlNpu() = default;

bool RtlNpu::traceSupported() {
#if VM_TRACE_FST
  return true;
#else
  return false;
#endif
}

uint32_t RtlNpu::readRegister(uint32_t offset) {
  Impl& m = *impl_;
  m.top->s_araddr = offset & 0xFFF;
  m.top->s_arvalid = 1;
  m.top->s_rready = 1;
  for (;;) {
    m.lowPhase();
    const bool ar = m.top->s_arvalid && m.top->s_arready;
    const bool r = m.top->s_rvalid && m.top->s_rready;
    const uint32_t data = m.top->s_rdata;
    m.highPhase();
    if (ar) m.top->s_arvalid = 0;
    if (r) {
      m.top->s_rready = 0;
      return data;
    }
  }
}

void RtlNpu::writeRegister(uint32_t offset, uint32_t value) {
  Impl& m = *impl_;
  m.top->s_awaddr = offset & 0xFFF;
  m.top->s_awvalid = 1;
  m.top->s_wdata = value;
  m.top->s_wstrb = 0xF;
  m.top->s_wvalid = 1;
  m.top->s_bready = 1;
  for (;;) {
    m.lowPhase();
    const bool aw = m.top->s_awvalid && m.top->s_awready;
    const bool w = m.top->s_wvalid && m.top->s_wready;
    const bool b = m.top->s_bvalid && m.top->s_bready;
    m.highPhase();
    if (aw) m.top->s_awvalid = 0;
    if (w) m.top->s_wvalid = 0;
    if (b) {
      m.top->s_bready = 0;
      return;
    }
  }
}

bool RtlNpu::interruptLine() const { return impl_->top->irq != 0; }

void RtlNpu::run(uint64_t cycles) {
  for (uint64_t i = 0; i < cycles; ++i) impl_->step();
}

uint64_t RtlNpu::runUntilInterrupt(uint64_t maxCycles) {
  Impl& m = *impl_;
  uint64_t ran = 0;
  while (ran < maxCycles && m.top->irq == 0) {
    m.step();
    ++ran;
  }
  return ran;
}

void RtlNpu::reset(uint64_t cycles) { impl_->applyReset(cycles); }

RtlJobResult RtlNpu::runJob(uint64_t cmdBase, uint32_t cmdSize, uint64_t regionTable, uint32_t regionCount,
                            std::vector<uint64_t>& finishCycles, uint64_t maxCycles) {
  const uint32_t commands = cmdSize >= SABLE_STREAM_HEADER_BYTES ? (cmdSize - SABLE_STREAM_HEADER_BYTES) / SABLE_COMMAND_BYTES : 0;
  finishCycles.assign(commands, 0);
  impl_->finish = &finishCycles;
  RtlJobResult result = runJob(cmdBase, cmdSize, regionTable, regionCount, maxCycles);
  impl_->finish = nullptr;
  return result;
}

RtlJobResult RtlNpu::runJob(uint64_t cmdBase, uint32_t cmdSize, uint64_t regionTable, uint32_t regionCount,
                            uint64_t maxCycles) {
  Impl& m = *impl_;
  const uint64_t begin = m.cycles;
  writeRegister(SABLE_REG_IRQ_MASK, SABLE_REG_IRQ_MASK_DONE_MASK | SABLE_REG_IRQ_MASK_ERROR_MASK);
  writeRegister(SABLE_REG_CMD_BASE_LO, static_cast<uint32_t>(cmdBase));
  writeRegister(SABLE_REG_CMD_BASE_HI, static_cast<uint32_t>(cmdBase >> 32));
  writeRegister(SABLE_REG_CMD_SIZE, cmdSize);
  writeRegister(SABLE_REG_REGION_TABLE_LO, static_cast<uint32_t>(regionTable));
  writeRegister(SABLE_REG_REGION_TABLE_HI, static_cast<uint32_t>(regionTable >> 32));
  writeRegister(SABLE_REG_REGION_COUNT, regionCount);
  writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_START_MASK);
  m.jobStart = m.cycles;
  m.jobStarted = true;
  RtlJobResult result;
  uint64_t nextProgress = m.options.progressInterval;
  while (!m.top->irq) {
    if (m.options.progress && m.cycles - m.jobStart >= nextProgress) {
      m.options.progress(m.cycles - m.jobStart);
      nextProgress += m.options.progressInterval;
    }
    if (m.cycles - begin >= maxCycles) {
      result.timedOut = true;
      writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_ABORT_MASK);
      while (!m.top->irq) m.step();
      break;
    }
    m.step();
  }
  result.errorCause = readRegister(SABLE_REG_ERROR_CAUSE);
  result.errorCommand = readRegister(SABLE_REG_ERROR_COMMAND);
  for (uint32_t i = 0; i < SABLE_COUNTER_COUNT; ++i) {
    const uint32_t lo = readRegister(SABLE_REG_COUNTERS_BASE + 8 * i);
    const uint32_t hi = readRegister(SABLE_REG_COUNTERS_BASE + 8 * i + 4);
    result.counters[i] = (uint64_t{hi} << 32) | lo;
  }
  writeRegister(SABLE_REG_IRQ_STATUS, SABLE_REG_IRQ_STATUS_DONE_MASK | SABLE_REG_IRQ_STATUS_ERROR_MASK);
  result.simulatedCycles = m.cycles - begin;
  return result;
}

uint64_t RtlNpu::cycle() const { return impl_->cycles; }
AxiMemory& RtlNpu::memory() { return impl_->axi; }

}  // namespace sable::sim
