// The AXI4 memory model of the RTL harness and the SystemC platform (sim/rtl/axi_memory.h): its
// bandwidth limit, the knob a user sets to model a board's DDR (sable-simd --memory-bandwidth).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "sable/sim/axi_memory.h"

namespace sable::sim {
namespace {

struct Transfer {
  uint64_t cycles = 0;  // from the first address handshake to the last beat (read) or response (write)
  bool dataCorrect = true;
};

// A master that reads `bursts` bursts of 16 beats (16 bytes each) back to back, one AR per cycle
// while accepted, with RREADY always high.
Transfer readBursts(AxiMemory& memory, const std::vector<uint8_t>& image, unsigned bursts) {
  Transfer t;
  unsigned issued = 0, beats = 0;
  const unsigned total = bursts * 16;
  while (beats < total && t.cycles < 100000) {
    const AxiSlaveOut& s = memory.outputs();
    AxiMasterOut m;
    m.rready = true;
    if (s.rvalid) {
      for (unsigned i = 0; i < 16; ++i) t.dataCorrect &= s.rdata[i] == image[beats * 16 + i];
      ++beats;
    }
    m.arvalid = issued < bursts;
    m.araddr = uint64_t{issued} * 256;
    m.arlen = 15;
    m.arsize = 4;
    if (m.arvalid && s.arready) ++issued;
    memory.tick(m);
    ++t.cycles;
  }
  return t;
}

// A master that writes `bursts` bursts of 16 beats, AW and W together, BREADY high.
Transfer writeBursts(AxiMemory& memory, unsigned bursts) {
  Transfer t;
  unsigned awIssued = 0, wBeats = 0, responses = 0;
  while (responses < bursts && t.cycles < 100000) {
    const AxiSlaveOut& s = memory.outputs();
    AxiMasterOut m;
    m.bready = true;
    if (s.bvalid) ++responses;
    m.awvalid = awIssued < bursts;
    m.awaddr = uint64_t{awIssued} * 256;
    m.awlen = 15;
    m.awsize = 4;
    m.wvalid = wBeats < bursts * 16;
    m.wstrb = 0xFFFF;
    m.wlast = wBeats % 16 == 15;
    for (unsigned i = 0; i < 16; ++i) m.wdata[i] = static_cast<uint8_t>(wBeats + i);
    if (m.awvalid && s.awready) ++awIssued;
    if (m.wvalid && s.wready) ++wBeats;
    memory.tick(m);
    ++t.cycles;
  }
  return t;
}

TEST(AxiMemory, ABandwidthLimitSpacesBeatsAndTheDataStaysExact) {
  std::vector<uint8_t> image(1 << 16);
  for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<uint8_t>(i * 7 + 3);
  constexpr unsigned kBursts = 8;  // 128 beats, 2 KiB
  constexpr unsigned kLatency = 20;

  AxiMemoryConfig full;
  full.readLatency = full.writeLatency = kLatency;
  AxiMemory fast(image, 0, full);
  const Transfer unlimited = readBursts(fast, image, kBursts);
  EXPECT_TRUE(unlimited.dataCorrect);
  EXPECT_LE(unlimited.cycles, kLatency + kBursts * 16 + 4) << "one beat per cycle once the first arrives";

  for (double bytesPerCycle : {8.0, 4.0, 1.0}) {
    SCOPED_TRACE(bytesPerCycle);
    AxiMemoryConfig limited = full;
    limited.bytesPerCycle = bytesPerCycle;
    AxiMemory slow(image, 0, limited);
    const Transfer read = readBursts(slow, image, kBursts);
    EXPECT_TRUE(read.dataCorrect);
    const double streaming = kBursts * 256 / bytesPerCycle;  // cycles the bytes need at that rate
    // The credit saved up during the latency (at most 16 beats) comes off the streaming time.
    EXPECT_GE(read.cycles, streaming - 256 / bytesPerCycle) << read.cycles;
    EXPECT_LE(read.cycles, kLatency + streaming + 4) << read.cycles;
    EXPECT_EQ(slow.stats().readBeats, kBursts * 16u);

    AxiMemory slowWrite(image, 0, limited);
    const Transfer write = writeBursts(slowWrite, kBursts);
    EXPECT_GE(write.cycles, streaming - 256 / bytesPerCycle) << write.cycles;
    EXPECT_LE(write.cycles, kLatency + streaming + 4) << write.cycles;
    EXPECT_EQ(slowWrite.stats().writeBeats, kBursts * 16u);
    EXPECT_TRUE(slowWrite.violations().empty());
  }
  for (unsigned i = 0; i < 16; ++i) EXPECT_EQ(image[i], static_cast<uint8_t>(i)) << "the writes landed";
}

}  // namespace
}  // namespace sable::sim
