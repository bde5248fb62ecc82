// RtlNpu: the cycle loop around the verilated subsystem (see the header and docs/rtl.md).
#include "sable/sim/rtl_npu.h"

#include <optional>
#include <stdexcept>

#include "Vsable_subsystem_sim.h"
#include "verilated.h"
#if VM_TRACE_FST
#include "verilated_fst_c.h"
#endif

namespace sable::sim {

namespace {

// The address bits inside one window of the subsystem's slave (bit WINDOW_BITS - 1 selects it).
constexpr uint32_t kWindowOffsetMask = (1u << (SABLE_SUBSYSTEM_WINDOW_BITS - 1)) - 1;

std::unique_ptr<VerilatedContext> makeContext() {
  auto context = std::make_unique<VerilatedContext>();
  context->randReset(0);  // deterministic: no random initial values
  return context;
}

}  // namespace

struct RtlNpu::Impl {
  Impl(DeviceMemory mem, RtlNpuOptions opts)
      : options(std::move(opts)),
        context(makeContext()),
        top(std::make_unique<Vsable_subsystem_sim>(context.get(), "npu")) {
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
    // Device memory where the subsystem puts it on its memory port (a constant output).
    top->eval();
    axi.emplace(std::span<uint8_t>(mem.data, mem.size), top->device_memory_base, options.memory);
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
    const AxiSlaveOut& s = axi->outputs();
    top->m_axi_arready = s.arready;
    top->m_axi_rvalid = s.rvalid;
    top->m_axi_rid = s.rid & 0xF;
    axiBytesToWide(top->m_axi_rdata, s.rdata.data(), 16);
    top->m_axi_rresp = s.rresp;
    top->m_axi_rlast = s.rlast;
    top->m_axi_awready = s.awready;
    top->m_axi_wready = s.wready;
    top->m_axi_bvalid = s.bvalid;
    top->m_axi_bid = s.bid & 0xF;
    top->m_axi_bresp = s.bresp;
    top->clk = 0;
    top->eval();
    hostInterrupts += top->host_irq;  // a one-cycle pulse per HOST_IRQ write
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
    m.arvalid = top->m_axi_arvalid;
    m.araddr = top->m_axi_araddr;
    m.arlen = top->m_axi_arlen;
    m.arsize = top->m_axi_arsize;
    m.arburst = top->m_axi_arburst;
    m.arid = top->m_axi_arid;
    m.rready = top->m_axi_rready;
    m.awvalid = top->m_axi_awvalid;
    m.awaddr = top->m_axi_awaddr;
    m.awlen = top->m_axi_awlen;
    m.awsize = top->m_axi_awsize;
    m.awburst = top->m_axi_awburst;
    m.awid = top->m_axi_awid;
    m.wvalid = top->m_axi_wvalid;
    axiBytesFromWide(top->m_axi_wdata, m.wdata.data(), 16);
    m.wstrb = top->m_axi_wstrb;
    m.wlast = top->m_axi_wlast;
    m.bready = top->m_axi_bready;
    axi->tick(m);
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

  // A 32-bit transaction on the subsystem's AXI4-Lite slave (the control core's port).
  uint32_t read(uint32_t address);
  void write(uint32_t address, uint32_t value);

  RtlNpuOptions options;
  std::unique_ptr<VerilatedContext> context;
  std::unique_ptr<Vsable_subsystem_sim> top;
  std::optional<AxiMemory> axi;  // set once the top has told where device memory is
#if VM_TRACE_FST
  std::unique_ptr<VerilatedFstC> trace;
  bool traceOpen = false;
#endif
  uint64_t cycles = 0;
  uint64_t hostInterrupts = 0;
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

uint32_t RtlNpu::Impl::read(uint32_t address) {
  top->s_axi_araddr = address;
  top->s_axi_arvalid = 1;
  top->s_axi_rready = 1;
  for (;;) {
    lowPhase();
    const bool ar = top->s_axi_arvalid && top->s_axi_arready;
    const bool r = top->s_axi_rvalid && top->s_axi_rready;
    const uint32_t data = top->s_axi_rdata;
    highPhase();
    if (ar) top->s_axi_arvalid = 0;
    if (r) {
      top->s_axi_rready = 0;
      return data;
    }
  }
}

void RtlNpu::Impl::write(uint32_t address, uint32_t value) {
  top->s_axi_awaddr = address;
  top->s_axi_awvalid = 1;
  top->s_axi_wdata = value;
  top->s_axi_wstrb = 0xF;
  top->s_axi_wvalid = 1;
  top->s_axi_bready = 1;
  for (;;) {
    lowPhase();
    const bool aw = top->s_axi_awvalid && top->s_axi_awready;
    const bool w = top->s_axi_wvalid && top->s_axi_wready;
    const bool b = top->s_axi_bvalid && top->s_axi_bready;
    highPhase();
    if (aw) top->s_axi_awvalid = 0;
    if (w) top->s_axi_wvalid = 0;
    if (b) {
      top->s_axi_bready = 0;
      return;
    }
  }
}

// Offsets inside a window alias as they do on the slave (the NPU decodes 12 bits, the block 8).
uint32_t RtlNpu::readRegister(uint32_t offset) {
  return impl_->read(SABLE_SUBSYSTEM_CSR_WINDOW + (offset & kWindowOffsetMask));
}

void RtlNpu::writeRegister(uint32_t offset, uint32_t value) {
  impl_->write(SABLE_SUBSYSTEM_CSR_WINDOW + (offset & kWindowOffsetMask), value);
}

uint32_t RtlNpu::readHostInterface(uint32_t offset) {
  return impl_->read(SABLE_SUBSYSTEM_HOSTIF_WINDOW + (offset & kWindowOffsetMask));
}

void RtlNpu::writeHostInterface(uint32_t offset, uint32_t value) {
  impl_->write(SABLE_SUBSYSTEM_HOSTIF_WINDOW + (offset & kWindowOffsetMask), value);
}

bool RtlNpu::interruptLine() const { return impl_->top->npu_irq != 0; }
bool RtlNpu::coreInterruptLine() const { return impl_->top->core_irq != 0; }
uint64_t RtlNpu::hostInterrupts() const { return impl_->hostInterrupts; }
uint64_t RtlNpu::deviceMemoryBase() const { return impl_->top->device_memory_base; }

void RtlNpu::run(uint64_t cycles) {
  for (uint64_t i = 0; i < cycles; ++i) impl_->step();
}

uint64_t RtlNpu::runUntilInterrupt(uint64_t maxCycles) {
  Impl& m = *impl_;
  uint64_t ran = 0;
  while (ran < maxCycles && m.top->npu_irq == 0) {
    m.step();
    ++ran;
  }
  return ran;
}

uint64_t RtlNpu::runUntilCoreInterrupt(uint64_t maxCycles) {
  Impl& m = *impl_;
  uint64_t ran = 0;
  while (ran < maxCycles && m.top->core_irq == 0) {
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
  while (!m.top->npu_irq) {
    if (m.options.progress && m.cycles - m.jobStart >= nextProgress) {
      m.options.progress(m.cycles - m.jobStart);
      nextProgress += m.options.progressInterval;
    }
    if (m.cycles - begin >= maxCycles) {
      result.timedOut = true;
      writeRegister(SABLE_REG_CONTROL, SABLE_REG_CONTROL_ABORT_MASK);
      while (!m.top->npu_irq) m.step();
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
AxiMemory& RtlNpu::memory() { return *impl_->axi; }

}  // namespace sable::sim
