// The input of the HAL request fuzz target (hal_request_fuzz.cc), read front to back (zeros once
// it is used up; u16 little-endian):
//   path u8 (% 7: execute, execute_1_2, executeSynchronously, execute_1_3,
//            executeSynchronously_1_3, executeFenced, burst)
//   model u8 (bit 0: the [?, 3] model with a dynamic output, else [2, 3])
//   flags u8 (bit 0 measure timing; bits 1-2 deadline: none, passed, +1 s, +1 us; bit 3 a loop
//            timeout above the maximum; bit 4 an invalid MeasureTiming; bit 5 (fenced) wait for
//            a fence signalled 1 ms later, bit 6 with an error; bit 7 (fenced) a 1 us timeout
//            after the fence, (burst) forget pool 0's slot and run again)
//   pools u8 (% 5), each: kind u8 (% 4: shared memory, a buffer of input role, of output role, a
//            token no buffer has), n u16 (% 4097: memory bytes; for a buffer, bit 0 gives it
//            dimensions [n >> 8, 3], bit 1 the role's index, bit 1 also a copyFrom with
//            dimensions [next u8, 3], and (n >> 4) bytes of source; for a token, its value)
//   inputs u8 (% 4) and outputs u8 (% 3), each: flags u8 (bit 0 hasNoValue, bit 1 dimensions
//            follow), pool u8, offset u16, length u16, [rank u8 (% 4), rank x dimension u8]
//   then bytes that fill the shared-memory pools in order.
// tests/fuzz/make_hal_request_seeds.py writes the seeds in this layout.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sable::fuzz {

class HalRequestReader {
 public:
  HalRequestReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t u8() { return at_ < size_ ? data_[at_++] : 0; }
  uint16_t u16() {
    const uint16_t low = u8();
    return static_cast<uint16_t>(low | (u8() << 8));
  }
  bool empty() const { return at_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

}  // namespace sable::fuzz
