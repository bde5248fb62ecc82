// An AXI4 slave memory for cycle-by-cycle simulation of verilated RTL: one read channel set
// (AR, R) and one write channel set (AW, W, B) over a byte array, the device-memory image.
//
// Cycle semantics. The model is a Moore machine clocked by the same rising edge as the RTL.
// Each clock cycle the harness
//   1. drives the RTL's slave-side inputs from outputs() (the slave's values for this cycle),
//   2. evaluates the RTL with clk = 0, so the master's outputs of this cycle settle,
//   3. calls tick() with those master outputs: every handshake of this cycle (VALID && READY,
//      READY being outputs()) takes effect, the model advances one cycle and outputs() becomes
//      next cycle's values,
//   4. evaluates the RTL with clk = 1 (the RTL still sees this cycle's slave outputs: drive the
//      new ones only at step 1 of the next cycle).
// Slave outputs are therefore registered: they never depend combinationally on this cycle's
// master outputs, so any master (combinational READY or not) is fine.
//
// Behaviour:
//  - AR and AW are accepted while fewer than maxReadBursts / maxWriteBursts are pending.
//  - Reads: a burst's first beat is valid readLatency cycles after its AR handshake (at least 1),
//    the following beats one per cycle; bursts are returned in acceptance order (so in order
//    per ID, which AXI requires), back to back: a pipelined memory.
//  - Writes: W beats are accepted independently of AW (AXI allows W before AW) and applied in
//    order, with their byte strobes, as soon as the burst's address is known; the B response is
//    valid writeLatency cycles after the later of the last beat and the AW (at least 1), in
//    order.
//  - Every beat outside [baseAddress, baseAddress + image size) is not performed and answers
//    DECERR; a beat overlapping an injected error range is not performed and answers that
//    range's response (SLVERR by default). A write burst's B carries the worst of its beats.
//  - Backpressure (readyProbability < 1): ARREADY, AWREADY and WREADY are each asserted with that
//    probability per cycle, and a due RVALID / BVALID is held back with the complementary
//    probability, from a generator seeded with `seed` (reproducible).
//  - Protocol checks on the master (recorded in violations(), never fatal): VALID dropped or
//    payload changed while VALID && !READY; WRAP bursts (FIXED and INCR are supported); AxSIZE
//    above the bus width; an INCR burst crossing a 4 KiB boundary; WLAST not exactly on the
//    burst's last beat.
// Narrow transfers (AxSIZE below the bus width) and unaligned start addresses follow AXI4:
// beat i of an INCR burst addresses (addr aligned to the size) + i·size; the byte lanes are those
// of the address within the bus word.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace sable::sim {

inline constexpr uint8_t kAxiOkay = 0;
inline constexpr uint8_t kAxiExOkay = 1;
inline constexpr uint8_t kAxiSlvErr = 2;
inline constexpr uint8_t kAxiDecErr = 3;

inline constexpr unsigned kAxiMaxDataBytes = 64;  // up to a 512-bit bus
using AxiData = std::array<uint8_t, kAxiMaxDataBytes>;

// The master's outputs in one cycle (what the slave samples).
struct AxiMasterOut {
  bool arvalid = false;
  uint64_t araddr = 0;
  uint8_t arlen = 0, arsize = 0, arburst = 1;
  uint32_t arid = 0;
  bool rready = false;
  bool awvalid = false;
  uint64_t awaddr = 0;
  uint8_t awlen = 0, awsize = 0, awburst = 1;
  uint32_t awid = 0;
  bool wvalid = false;
  AxiData wdata{};
  uint64_t wstrb = 0;  // bit i: byte lane i
  bool wlast = false;
  bool bready = false;
};

// The slave's outputs in one cycle (what the master samples).
struct AxiSlaveOut {
  bool arready = false;
  bool rvalid = false;
  uint32_t rid = 0;
  AxiData rdata{};
  uint8_t rresp = kAxiOkay;
  bool rlast = false;
  bool awready = false;
  bool wready = false;
  bool bvalid = false;
  uint32_t bid = 0;
  uint8_t bresp = kAxiOkay;
};

struct AxiMemoryConfig {
  unsigned dataBytes = 16;        // bus width in bytes: 1, 2, 4 ... 64
  unsigned readLatency = 20;      // AR handshake -> first R beat valid (cycles, >= 1)
  unsigned writeLatency = 20;     // last W beat (and AW) -> B valid (cycles, >= 1)
  unsigned maxReadBursts = 64;    // AR accepted while fewer read bursts are pending
  unsigned maxWriteBursts = 64;   // AW accepted while fewer write bursts are pending
  unsigned maxWriteBeats = 1024;  // W beats buffered ahead of their AW
  double readyProbability = 1.0;  // < 1: random backpressure, see above
  // Sustained bandwidth of the memory in bytes per cycle, reads and writes together (a board's
  // DDR); 0: one beat per cycle in each direction. Each R beat returned and W beat accepted
  // spends a bus word of credit, which accrues at this rate (up to one burst of 16 beats ahead).
  double bytesPerCycle = 0.0;
  uint64_t seed = 1;
};

struct AxiMemoryStats {
  uint64_t readBursts = 0, readBeats = 0, writeBursts = 0, writeBeats = 0;
  uint64_t readErrors = 0, writeErrors = 0;  // beats answered other than OKAY
};

class AxiMemory {
 public:
  // `image` is the device memory, at device address `baseAddress`; it is not owned and must
  // outlive the model (the harness may read and write it between cycles).
  AxiMemory(std::span<uint8_t> image, uint64_t baseAddress, AxiMemoryConfig config = {});

  // Slave outputs for the current cycle.
  const AxiSlaveOut& outputs() const { return out_; }
  // One clock cycle: the handshakes of this cycle given the master's outputs, then advance.
  void tick(const AxiMasterOut& m);
  // Return to the power-on state (nothing pending; the image and error ranges are kept).
  void reset();

  // Beats overlapping [begin, end) are not performed and answer `resp`.
  void injectError(uint64_t begin, uint64_t end, uint8_t resp = kAxiSlvErr);
  void clearErrors() { errors_.clear(); }

  // No transaction accepted and not yet completed, nothing buffered.
  bool idle() const;
  uint64_t cycle() const { return cycle_; }
  const AxiMemoryStats& stats() const { return stats_; }
  const std::vector<std::string>& violations() const { return violations_; }
  const AxiMemoryConfig& config() const { return config_; }

 private:
  struct Burst {
    uint32_t id = 0;
    uint64_t addr = 0;
    unsigned len = 0;   // beats
    unsigned size = 0;  // bytes per beat
    uint8_t type = 1;
    unsigned done = 0;  // beats performed
    uint64_t due = 0;   // read: cycle its first beat may be returned
    uint8_t resp = kAxiOkay;
  };
  struct WBeat {
    AxiData data{};
    uint64_t strb = 0;
    bool last = false;
  };
  struct Response {
    uint32_t id;
    uint8_t resp;
    uint64_t due;
  };
  struct ErrorRange {
    uint64_t begin, end;
    uint8_t resp;
  };

  uint64_t beatAddress(const Burst& b, unsigned beat) const;
  uint8_t beatResponse(uint64_t addr, unsigned size) const;
  bool chance();
  void checkStable(const AxiMasterOut& m);
  void checkBurst(const char* channel, uint64_t addr, unsigned len, unsigned size, uint8_t type);
  void violation(std::string what);
  void fillReadBeat();

  std::span<uint8_t> image_;
  uint64_t base_;
  AxiMemoryConfig config_;
  std::mt19937_64 rng_;
  uint64_t cycle_ = 0;
  AxiSlaveOut out_{};
  AxiMasterOut prev_{};  // master outputs of the previous cycle (stability checks)
  bool prevArStall_ = false, prevAwStall_ = false, prevWStall_ = false;

  std::deque<Burst> reads_;         // accepted, in order; front is being returned
  std::deque<Burst> writes_;        // accepted AW not yet fully written, in order
  std::deque<WBeat> wbeats_;        // W beats waiting for their AW
  std::deque<Response> responses_;  // B responses not yet accepted, in order
  unsigned wBurstBeats_ = 0;        // W beats received of the burst being written (WLAST check)
  double credit_ = 0.0;             // bandwidth credit in bytes (bytesPerCycle > 0)
  std::vector<ErrorRange> errors_;
  AxiMemoryStats stats_;
  std::vector<std::string> violations_;
};

// Helpers for verilated wide ports (VlWide<N>: 32-bit words, least significant first) and
// plain integer ports.
template <class Wide>
inline void axiBytesFromWide(const Wide& w, uint8_t* out, unsigned bytes) {
  for (unsigned i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(w[i / 4] >> (8 * (i % 4)));
}
template <class Wide>
inline void axiBytesToWide(Wide& w, const uint8_t* in, unsigned bytes) {
  for (unsigned i = 0; i < (bytes + 3) / 4; ++i) w[i] = 0;
  for (unsigned i = 0; i < bytes; ++i) w[i / 4] |= static_cast<uint32_t>(in[i]) << (8 * (i % 4));
}

}  // namespace sable::sim
