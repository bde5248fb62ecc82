// `sable mlts` runs every measurement and every stress case in a child process of its own, as
// Android's MLTS crash suite does, so that what the case does to its process is observable from
// outside: a clean result, an error, a signal, or no end at all. A child reports through a pipe —
// progress marks while it runs, then one result (a payload, or the message of an error) — and the
// parent classifies how it ended.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "sable/hal/result.h"

namespace sable::tools::mlts {

// How a case ended, in MLTS's words.
enum class CaseClass {
  SUCCESS,  // the child reported a result and exited 0
  FAILURE,  // a clean error (reported, exit status 1), a wrong result, or an exit without a result
  HANG,     // the child did not end within its time limit (it was then killed)
  CRASH,    // the child was ended by a signal it did not expect (SIGSEGV, SIGABRT, ...)
  // The case does not apply to the device (an asynchronous case on a device with no asynchronous
  // path): neither a pass nor a failure, and reported as such.
  NOT_APPLICABLE,
};
std::string_view toString(CaseClass c);

// What the parent saw of a child.
struct ChildOutcome {
  CaseClass outcome = CaseClass::FAILURE;
  std::string detail;   // the error, the signal, or the time limit; empty on success
  std::string payload;  // the child's result on success
  double milliseconds = 0;
};

// Thrown by a body whose case does not apply to the device it runs on; the child reports it and
// the case is NOT_APPLICABLE with what() as its detail (it never leaves the child's runner).
class NotApplicable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The body of a child. `progress(mark)` tells the parent how far it got (ChildProcess::waitForProgress);
// the returned string is the payload, an error becomes a FAILURE with its message.
using ChildBody = std::function<hal::Result<std::string>(const std::function<void(std::string_view)>& progress)>;

// One child process running a body. The parent's stdio buffers are flushed before fork() so that
// the child does not print them again; the child leaves through exit() (static destructors run:
// a client's clean shutdown is part of what is tested).
class ChildProcess {
 public:
  static hal::Result<ChildProcess> start(const ChildBody& body);
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  // Kills and reaps a child still running (nothing is left behind).
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // The next progress mark, or nullopt when the child ended or `timeout` passed first.
  std::optional<std::string> waitForProgress(std::chrono::milliseconds timeout);
  // SIGKILL, as a client process that is killed from outside; finish() then reports it as expected.
  void kill();
  // Waits up to `timeout` from now for the end (then kills: HANG) and classifies it. Call once.
  ChildOutcome finish(std::chrono::milliseconds timeout);

 private:
  ChildProcess(pid_t pid, int fd) : pid_(pid), fd_(fd), start_(std::chrono::steady_clock::now()) {}
  // Reads messages until a progress mark (returned), EOF, or the deadline.
  std::optional<std::string> read(std::chrono::steady_clock::time_point deadline, bool untilEnd);

  pid_t pid_ = -1;
  int fd_ = -1;
  std::chrono::steady_clock::time_point start_;
  std::string buffer_;                 // bytes read, not yet parsed into messages
  std::optional<std::string> result_;  // the payload, when the child reported one
  std::optional<std::string> error_;   // the error message, when the child reported one
  std::optional<std::string> notApplicable_;  // why the case does not apply, when the child said so
  bool killed_ = false;                // by kill(): a SIGKILL that was meant
  bool eof_ = false;
};

// start + finish: the body in a child, classified, within `timeout`.
ChildOutcome runInChild(const ChildBody& body, std::chrono::milliseconds timeout);

}  // namespace sable::tools::mlts
