#include "futex_pingpong.h"

#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

namespace sable::tools {
namespace {

// Whose turn it is, and a flag the parent raises when the child must stop.
struct Shared {
  std::atomic<uint32_t> turn;  // 0: the parent's, 1: the child's
  std::atomic<uint32_t> stop;
};
static_assert(std::atomic<uint32_t>::is_always_lock_free);

long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  return ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

// Waits until `word` holds `want`; false after `seconds` without it.
bool waitFor(std::atomic<uint32_t>* word, uint32_t want, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (true) {
    const uint32_t seen = word->load(std::memory_order_acquire);
    if (seen == want) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    const timespec slice{0, 100'000'000};
    futex(word, FUTEX_WAIT, seen, &slice);  // returns at once when the word changed meanwhile
  }
}

void pass(std::atomic<uint32_t>* word, uint32_t to) {
  word->store(to, std::memory_order_release);
  futex(word, FUTEX_WAKE, 1, nullptr);
}

}  // namespace

std::optional<std::vector<double>> futexPingPong(uint32_t rounds, uint32_t warmup, std::string& error) {
  void* memory = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    error = fmt::format("mmap: {}", std::strerror(errno));
    return std::nullopt;
  }
  auto* shared = new (memory) Shared{};
  const pid_t child = ::fork();
  if (child < 0) {
    error = fmt::format("fork: {}", std::strerror(errno));
    ::munmap(memory, sizeof(Shared));
    return std::nullopt;
  }
  if (child == 0) {
    // The child answers each ping until told to stop (or the parent stops answering).
    while (waitFor(&shared->turn, 1, 10) && shared->stop.load(std::memory_order_acquire) == 0) pass(&shared->turn, 0);
    ::_exit(0);
  }
  std::vector<double> samples;
  samples.reserve(rounds);
  bool answered = true;
  for (uint32_t i = 0; i < warmup + rounds && answered; ++i) {
    const auto start = std::chrono::steady_clock::now();
    pass(&shared->turn, 1);
    answered = waitFor(&shared->turn, 0, 5);
    const auto end = std::chrono::steady_clock::now();
    if (i >= warmup) samples.push_back(std::chrono::duration<double, std::micro>(end - start).count());
  }
  shared->stop.store(1, std::memory_order_release);
  pass(&shared->turn, 1);
  if (!answered) ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::munmap(memory, sizeof(Shared));
  if (!answered) {
    error = "the ping-pong's child process stopped answering";
    return std::nullopt;
  }
  return samples;
}

}  // namespace sable::tools
