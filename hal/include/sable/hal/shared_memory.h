// SharedMemory: a memory pool backed by an anonymous memfd, mapped read-write into this process.
// The file descriptor can be passed to another process (SCM_RIGHTS, or inherited) and mapped
// there, which is what HAL hidl_memory/ashmem pools are on Android.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "sable/hal/result.h"

namespace sable::hal {

class SharedMemory {
 public:
  // Creates a zero-filled region of `size` bytes (size 0 is allowed and maps nothing).
  static Result<std::shared_ptr<SharedMemory>> create(size_t size, const std::string& name = "sable-pool");
  // Maps an existing descriptor (duplicated; the caller keeps its own). `size` bytes from 0.
  static Result<std::shared_ptr<SharedMemory>> fromFd(int fd, size_t size);

  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;
  ~SharedMemory();

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  int fd() const { return fd_; }
  std::span<uint8_t> bytes() { return {data_, size_}; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }

 private:
  SharedMemory(int fd, uint8_t* data, size_t size) : fd_(fd), data_(data), size_(size) {}
  int fd_ = -1;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace sable::hal
