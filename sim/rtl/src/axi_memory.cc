#include "sable/sim/axi_memory.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <utility>

namespace sable::sim {

AxiMemory::AxiMemory(std::span<uint8_t> image, uint64_t baseAddress, AxiMemoryConfig config)
    : image_(image), base_(baseAddress), config_(config), rng_(config.seed) {
  config_.dataBytes = std::clamp(config_.dataBytes, 1u, kAxiMaxDataBytes);
  config_.readLatency = std::max(config_.readLatency, 1u);
  config_.writeLatency = std::max(config_.writeLatency, 1u);
  config_.maxReadBursts = std::max(config_.maxReadBursts, 1u);
  config_.maxWriteBursts = std::max(config_.maxWriteBursts, 1u);
  config_.maxWriteBeats = std::max(config_.maxWriteBeats, 1u);
  config_.bytesPerCycle = std::max(config_.bytesPerCycle, 0.0);
  reset();
}

void AxiMemory::reset() {
  cycle_ = 0;
  out_ = {};
  prev_ = {};
  prevArStall_ = prevAwStall_ = prevWStall_ = false;
  reads_.clear();
  writes_.clear();
  wbeats_.clear();
  responses_.clear();
  wBurstBeats_ = 0;
  credit_ = 0.0;
  // READY in the first cycle follows the same rules as in every other cycle.
  out_.arready = chance();
  out_.awready = chance();
  out_.wready = chance();
}

void AxiMemory::injectError(uint64_t begin, uint64_t end, uint8_t resp) {
  errors_.push_back({begin, end, resp});
}

bool AxiMemory::idle() const {
  return reads_.empty() && writes_.empty() && wbeats_.empty() && responses_.empty() && !out_.rvalid &&
         !out_.bvalid;
}

bool AxiMemory::chance() {
  if (config_.readyProbability >= 1.0) return true;
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < config_.readyProbability;
}

void AxiMemory::violation(std::string what) {
  std::ostringstream s;
  s << "cycle " << cycle_ << ": " << what;
  violations_.push_back(s.str());
}

uint64_t AxiMemory::beatAddress(const Burst& b, unsigned beat) const {
  const uint64_t aligned = b.addr & ~uint64_t{b.size - 1};
  if (b.type == 0) return aligned;                          // FIXED
  return aligned + uint64_t{beat} * b.size;                 // INCR
}

uint8_t AxiMemory::beatResponse(uint64_t addr, unsigned size) const {
  if (addr < base_ || addr - base_ > image_.size() || image_.size() - (addr - base_) < size) return kAxiDecErr;
  uint8_t resp = kAxiOkay;
  for (const ErrorRange& e : errors_) {
    if (addr < e.end && addr + size > e.begin) resp = std::max(resp, e.resp);
  }
  return resp;
}

void AxiMemory::checkBurst(const char* channel, uint64_t addr, unsigned len, unsigned size, uint8_t type) {
  if (size > config_.dataBytes) violation(std::string(channel) + ": AxSIZE above the bus width");
  if (type == 2) violation(std::string(channel) + ": WRAP bursts are not supported");
  if (type == 1) {
    const uint64_t first = addr & ~uint64_t{size - 1};
    const uint64_t last = first + uint64_t{len} * size - 1;
    if ((first >> 12) != (last >> 12)) {
      std::ostringstream s;
      s << channel << ": INCR burst at 0x" << std::hex << addr << std::dec << " of " << len
        << " beats crosses a 4 KiB boundary";
      violation(s.str());
    }
  }
}

void AxiMemory::checkStable(const AxiMasterOut& m) {
  const unsigned n = config_.dataBytes;
  if (prevArStall_ && (!m.arvalid || m.araddr != prev_.araddr || m.arlen != prev_.arlen ||
                       m.arsize != prev_.arsize || m.arburst != prev_.arburst || m.arid != prev_.arid)) {
    violation("AR: ARVALID dropped or payload changed before ARREADY");
  }
  if (prevAwStall_ && (!m.awvalid || m.awaddr != prev_.awaddr || m.awlen != prev_.awlen ||
                       m.awsize != prev_.awsize || m.awburst != prev_.awburst || m.awid != prev_.awid)) {
    violation("AW: AWVALID dropped or payload changed before AWREADY");
  }
  if (prevWStall_ && (!m.wvalid || m.wstrb != prev_.wstrb || m.wlast != prev_.wlast ||
                      std::memcmp(m.wdata.data(), prev_.wdata.data(), n) != 0)) {
    violation("W: WVALID dropped or payload changed before WREADY");
  }
  prevArStall_ = m.arvalid && !out_.arready;
  prevAwStall_ = m.awvalid && !out_.awready;
  prevWStall_ = m.wvalid && !out_.wready;
  prev_ = m;
}

void AxiMemory::tick(const AxiMasterOut& m) {
  checkStable(m);
  const unsigned bus = config_.dataBytes;

  // ---- handshakes of this cycle ----
  const bool rFire = out_.rvalid && m.rready;
  const bool bFire = out_.bvalid && m.bready;
  if (m.arvalid && out_.arready) {
    Burst b;
    b.id = m.arid;
    b.addr = m.araddr;
    b.len = unsigned{m.arlen} + 1;
    b.size = 1u << m.arsize;
    b.type = m.arburst;
    b.due = cycle_ + config_.readLatency;
    checkBurst("AR", b.addr, b.len, b.size, b.type);
    reads_.push_back(b);
    ++stats_.readBursts;
  }
  if (rFire) {
    Burst& b = reads_.front();
    ++stats_.readBeats;
    if (out_.rresp != kAxiOkay) ++stats_.readErrors;
    if (++b.done == b.len) reads_.pop_front();
  }
  if (m.awvalid && out_.awready) {
    Burst b;
    b.id = m.awid;
    b.addr = m.awaddr;
    b.len = unsigned{m.awlen} + 1;
    b.size = 1u << m.awsize;
    b.type = m.awburst;
    checkBurst("AW", b.addr, b.len, b.size, b.type);
    writes_.push_back(b);
    ++stats_.writeBursts;
  }
  if (m.wvalid && out_.wready) {
    WBeat w;
    std::memcpy(w.data.data(), m.wdata.data(), bus);
    w.strb = m.wstrb;
    w.last = m.wlast;
    wbeats_.push_back(w);
    if (config_.bytesPerCycle > 0.0) credit_ -= bus;
  }
  if (bFire) responses_.pop_front();

  // Perform the W beats whose burst address is known, in order.
  while (!writes_.empty() && !wbeats_.empty()) {
    Burst& b = writes_.front();
    const WBeat& w = wbeats_.front();
    const uint64_t addr = beatAddress(b, b.done);
    const unsigned lane = static_cast<unsigned>(addr % bus);
    const uint8_t resp = beatResponse(addr, b.size);
    if (resp == kAxiOkay) {
      for (unsigned k = 0; k < b.size; ++k) {
        if ((w.strb >> (lane + k)) & 1) image_[addr - base_ + k] = w.data[lane + k];
      }
    } else {
      ++stats_.writeErrors;
    }
    b.resp = std::max(b.resp, resp);
    ++stats_.writeBeats;
    const bool last = ++b.done == b.len;
    if (w.last != last) violation(last ? "W: WLAST missing on a burst's last beat" : "W: WLAST before a burst's last beat");
    wbeats_.pop_front();
    if (last) {
      responses_.push_back({b.id, b.resp, cycle_ + config_.writeLatency});
      writes_.pop_front();
    }
  }

  // ---- next cycle's outputs ----
  ++cycle_;
  // With a bandwidth limit a beat needs credit; reads are served before writes.
  const bool limited = config_.bytesPerCycle > 0.0;
  if (limited) credit_ = std::min(credit_ + config_.bytesPerCycle, 16.0 * bus);
  out_.arready = reads_.size() < config_.maxReadBursts && chance();
  out_.awready = writes_.size() + responses_.size() < config_.maxWriteBursts && chance();
  out_.wready = wbeats_.size() < config_.maxWriteBeats && chance();

  // A VALID stays up, with its payload, until its handshake.
  if (!(out_.rvalid && !rFire)) {
    out_.rvalid = false;
    out_.rlast = false;
    if (!reads_.empty() && reads_.front().due <= cycle_ && (!limited || credit_ >= bus) && chance()) {
      fillReadBeat();
      if (limited) credit_ -= bus;
    }
  }
  if (limited && credit_ < bus) out_.wready = false;
  if (!(out_.bvalid && !bFire)) {
    out_.bvalid = false;
    if (!responses_.empty() && responses_.front().due <= cycle_ && chance()) {
      out_.bvalid = true;
      out_.bid = responses_.front().id;
      out_.bresp = responses_.front().resp;
    }
  }
}

void AxiMemory::fillReadBeat() {
  const unsigned bus = config_.dataBytes;
  const Burst& b = reads_.front();
  const uint64_t addr = beatAddress(b, b.done);
  const unsigned lane = static_cast<unsigned>(addr % bus);
  const uint8_t resp = beatResponse(addr, b.size);
  out_.rvalid = true;
  out_.rid = b.id;
  out_.rresp = resp;
  out_.rlast = b.done + 1 == b.len;
  out_.rdata.fill(0);
  if (resp == kAxiOkay) std::memcpy(out_.rdata.data() + lane, image_.data() + (addr - base_), b.size);
}

}  // namespace sable::sim
