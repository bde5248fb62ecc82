// An owned file descriptor (closed on destruction): sync fences, FMQ rings and their events.
#pragma once

#include "sable/hal/result.h"

namespace sable::hal {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the descriptor held (if any) and holds `fd`.
  void reset(int fd = -1);
  // A duplicate (close-on-exec) of `fd`, or an INVALID_ARGUMENT error when it is not open.
  static Result<UniqueFd> duplicate(int fd);

 private:
  int fd_ = -1;
};

}  // namespace sable::hal
