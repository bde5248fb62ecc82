#include "mlts_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <utility>

#include <fmt/format.h>

namespace sable::tools::mlts {
namespace {

// A message on the pipe: one type byte, a 4-byte length (host order: both ends are one binary),
// then the text.
constexpr char kProgress = 'P';
constexpr char kResult = 'R';
constexpr char kError = 'E';
constexpr char kNotApplicable = 'N';

void writeAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent stopped listening: nothing left to tell
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void writeMessage(int fd, char type, std::string_view text) {
  const auto length = static_cast<uint32_t>(text.size());
  char header[5];
  header[0] = type;
  std::memcpy(header + 1, &length, 4);
  writeAll(fd, header, sizeof header);
  writeAll(fd, text.data(), text.size());
}

[[noreturn]] void runChild(int fd, pid_t parent, const ChildBody& body) {
  // A child never outlives `sable mlts` (a killed tool leaves no stress client behind).
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(125);
  int status = 1;
  try {
    auto result = body([fd](std::string_view mark) { writeMessage(fd, kProgress, mark); });
    if (result.ok()) {
      writeMessage(fd, kResult, *result);
      status = 0;
    } else {
      writeMessage(fd, kError, fmt::format("{} ({})", result.error().message, hal::toString(result.error().status)));
    }
  } catch (const NotApplicable& e) {
    writeMessage(fd, kNotApplicable, e.what());
    status = 0;
  } catch (const std::exception& e) {
    writeMessage(fd, kError, fmt::format("exception: {}", e.what()));
  }
  ::close(fd);
  std::fflush(nullptr);
  std::exit(status);
}

}  // namespace

std::string_view toString(CaseClass c) {
  switch (c) {
    case CaseClass::SUCCESS: return "SUCCESS";
    case CaseClass::FAILURE: return "FAILURE";
    case CaseClass::HANG: return "HANG";
    case CaseClass::CRASH: return "CRASH";
    case CaseClass::NOT_APPLICABLE: return "NOT_APPLICABLE";
  }
  return "?";
}

hal::Result<ChildProcess> ChildProcess::start(const ChildBody& body) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return hal::generalFailure("pipe: {}", std::strerror(errno));
  // Whatever the parent has buffered would otherwise be written a second time by the child.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return hal::generalFailure("fork: {}", std::strerror(error));
  }
  if (pid == 0) {
    ::close(fds[0]);
    runChild(fds[1], parent, body);
  }
  ::close(fds[1]);
  return ChildProcess(pid, fds[0]);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      fd_(std::exchange(other.fd_, -1)),
      start_(other.start_),
      buffer_(std::move(other.buffer_)),
      result_(std::move(other.result_)),
      error_(std::move(other.error_)),
      notApplicable_(std::move(other.notApplicable_)),
      killed_(other.killed_),
      eof_(other.eof_) {}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string> ChildProcess::read(std::chrono::steady_clock::time_point deadline, bool untilEnd) {
  for (;;) {
    // Parse whatever complete messages the buffer holds.
    while (buffer_.size() >= 5) {
      uint32_t length = 0;
      std::memcpy(&length, buffer_.data() + 1, 4);
      if (buffer_.size() < 5 + size_t{length}) break;
      const char type = buffer_[0];
      std::string text = buffer_.substr(5, length);
      buffer_.erase(0, 5 + size_t{length});
      if (type == kResult) result_ = std::move(text);
      if (type == kError) error_ = std::move(text);
      if (type == kNotApplicable) notApplicable_ = std::move(text);
      if (type == kProgress && !untilEnd) return text;
    }
    if (eof_) return std::nullopt;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{fd_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) return std::nullopt;
    if (ready <= 0) continue;
    char chunk[65536];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof_ = true;  // every copy of the write end is closed: the child is gone or done
      continue;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

std::optional<std::string> ChildProcess::waitForProgress(std::chrono::milliseconds timeout) {
  return read(std::chrono::steady_clock::now() + timeout, false);
}

void ChildProcess::kill() {
  if (pid_ > 0 && !killed_) {
    ::kill(pid_, SIGKILL);
    killed_ = true;
  }
}

ChildOutcome ChildProcess::finish(std::chrono::milliseconds timeout) {
  ChildOutcome outcome;
  // From now, not from the start: the suite's killed client calls this with a few seconds after a
  // kill that may come minutes into the child's life (a large model's preparation and runs).
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  read(deadline, true);
  // The pipe may close before the process is reaped (or a grandchild may hold it open): wait for
  // the process itself until the same deadline.
  int status = 0;
  bool ended = false;
  for (;;) {
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      ended = true;
      break;
    }
    if (r < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= deadline) break;
    usleep(2000);
  }
  if (!ended) {
    ::kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
    outcome.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
    outcome.outcome = CaseClass::HANG;
    outcome.detail = fmt::format("no end within {} ms: killed", timeout.count());
    return outcome;
  }
  pid_ = -1;
  outcome.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (killed_ && sig == SIGKILL) {
      outcome.outcome = CaseClass::SUCCESS;
      outcome.detail = "killed as intended";
    } else {
      outcome.outcome = CaseClass::CRASH;
      outcome.detail = fmt::format("signal {} ({})", sig, strsignal(sig));
      if (error_) outcome.detail += ": " + *error_;
    }
    return outcome;
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 0 && notApplicable_) {
    outcome.outcome = CaseClass::NOT_APPLICABLE;
    outcome.detail = std::move(*notApplicable_);
  } else if (code == 0 && result_) {
    outcome.outcome = CaseClass::SUCCESS;
    outcome.payload = std::move(*result_);
  } else if (error_) {
    outcome.outcome = CaseClass::FAILURE;
    outcome.detail = *error_;
  } else {
    outcome.outcome = CaseClass::FAILURE;
    outcome.detail = fmt::format("exited with status {} without a result", code);
  }
  return outcome;
}

ChildOutcome runInChild(const ChildBody& body, std::chrono::milliseconds timeout) {
  auto child = ChildProcess::start(body);
  if (!child.ok()) return ChildOutcome{CaseClass::FAILURE, child.error().message, {}, 0};
  return child->finish(timeout);
}

}  // namespace sable::tools::mlts
