// libFuzzer target: sequences of UAPI requests with random arguments against kmd/core, the
// driver's logic every client reaches through an ioctl, over the real firmware on its control-core
// thread and the NPU's functional model (tests/kmd/kmd_core_board.h: in-process, no device server).
// Two clients per input (owners) create and free buffer objects, register signed, unsigned and
// altered programs with any bindings, submit jobs with any buffer tables, priorities and
// deadlines, wait on, query and release fences, and reset the device.
//
// What must hold, whatever the requests (a violation traps, so libFuzzer keeps the input):
// - every request returns 0 or a negative errno, and no access leaves device memory (the board's
//   memory throws on one: an uncaught exception aborts);
// - a client's handles and fences are refused to the other client (isolation);
// - a copy job that completed without error copied its input to its output;
// - once both clients have closed, every byte of device memory they held is free again (the
//   closes reclaim everything, jobs still running included) and the firmware still serves.
//
// The input is a sequence of 8-byte requests (uapi_input.h). The seeds (tests/fuzz/uapi/,
// make_uapi_seeds.py) are the sequences a well-behaved client sends: create, register, submit,
// wait, query, release, with a reset between.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>
#include <vector>

#include "kmd_core_board.h"
#include "kmd_streams.h"
#include "uapi_input.h"

namespace {

using sable::fuzz::UapiOp;
using sable::fuzz::UapiRequest;

constexpr int64_t kMillisecond = 1'000'000;

void check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "uapi_fuzz: %s\n", what);
    __builtin_trap();
  }
}
// SABLE_FUZZ_TRACE=1: every request's result on stderr (to read what a reproducer does).
const bool kTrace = std::getenv("SABLE_FUZZ_TRACE") != nullptr;

void checkErrno(int result, const char* what) {
  if (kTrace) std::fprintf(stderr, "uapi_fuzz: %s -> %d\n", what, result);
  if (result > 0 || result < -4095) {
    std::fprintf(stderr, "uapi_fuzz: %s returned %d, neither 0 nor a negative errno\n", what, result);
    __builtin_trap();
  }
}

const sable::umd::SigningKey& fuzzKey() {
  static const sable::umd::SigningKey key = [] {
    auto k = sable::umd::SigningKey::loadOrCreate(std::filesystem::temp_directory_path() / "sable-fuzz-key");
    if (!k.ok()) {
      std::fprintf(stderr, "uapi_fuzz: no signing key: %s\n", k.error().message.c_str());
      std::abort();
    }
    return *k;
  }();
  return key;
}

sable::kmdtest::FirmwareBoard& board() {
  static sable::kmdtest::FirmwareBoard* b = [] {
    auto* created = new sable::kmdtest::FirmwareBoard;  // lives as long as the process
    if (const std::string error = created->start(fuzzKey()); !error.empty()) {
      std::fprintf(stderr, "uapi_fuzz: %s\n", error.c_str());
      std::abort();
    }
    return created;
  }();
  return *b;
}

uint64_t freeBytes(sable_core* core) {
  uint64_t total = 0, free = 0;
  sable_core_memory_info(core, &total, &free);
  return free;
}

struct Bo {
  uint32_t handle;
  uint64_t address;
  uint64_t size;
};
struct Job {
  uint64_t fence;
  uint32_t lines;  // a copy program's lines (0: not a copy with distinct buffers)
  Bo in, out;
  uint64_t writes;  // the client's writes when it was submitted
};
struct Client {
  uint64_t owner;
  std::vector<Bo> bos;
  std::map<uint32_t, uint32_t> programs;  // handle → lines of its copy stream (0: empty stream)
  std::vector<Job> jobs;
  // Whatever may have written the client's objects (its own writes, streams copied into them,
  // jobs submitted, objects freed and their memory reused): a copy job's output is checked only
  // when nothing wrote after it.
  uint64_t writes = 0;
};

// The n-th element of `v` (any n), or nullptr when `v` is empty.
template <typename T>
T* pick(std::vector<T>& v, uint32_t n) {
  return v.empty() ? nullptr : &v[n % v.size()];
}

class Session {
 public:
  explicit Session(sable::kmdtest::FirmwareBoard& b, uint64_t firstOwner)
      : board_(b), core_(b.core_.get()), clients_{Client{firstOwner, {}, {}, {}, 0}, Client{firstOwner + 1, {}, {}, {}, 0}} {}

  void run(const UapiRequest& r) {
    Client& me = clients_[r.a & 1];
    Client& other = clients_[(r.a & 1) ^ 1];
    // a bit 1: the handle comes from the other client (must be refused); bit 2: a raw value.
    const bool foreign = (r.a & 2) != 0;
    const bool raw = (r.a & 4) != 0;
    switch (static_cast<UapiOp>(r.op % static_cast<uint8_t>(UapiOp::kCount))) {
      case UapiOp::kBoCreate: {
        sable_uapi_bo_create create{};
        create.size = (r.b & 1) ? r.v : (r.v % 65536);
        create.flags = (r.b & 2) ? r.c : 0;
        const int result = sable_core_bo_create(core_, me.owner, &create);
        checkErrno(result, "BO_CREATE");
        if (result == 0) {
          check(create.size > 0 && create.flags == 0, "BO_CREATE accepted a size of 0 or unknown flags");
          check(create.device_address + create.size <= sable::kmdtest::FirmwareBoard::kMemoryBytes,
                "BO_CREATE placed an object outside device memory");
          me.bos.push_back({create.handle, create.device_address, create.size});
        }
        break;
      }
      case UapiOp::kBoFree: {
        const uint32_t handle = boHandle(me, other, foreign, raw, r);
        const int result = sable_core_bo_free(core_, me.owner, handle);
        checkErrno(result, "BO_FREE");
        refusedIfForeign(result, me, other, handle, "BO_FREE of another client's object succeeded");
        if (result == 0) {
          std::erase_if(me.bos, [&](const Bo& bo) { return bo.handle == handle; });
          ++me.writes;  // its memory may go to a new, zero-filled object
        }
        break;
      }
      case UapiOp::kBoGet: {
        const uint32_t handle = boHandle(me, other, foreign, raw, r);
        sable_core_bo bo{};
        const int result = sable_core_bo_get(core_, me.owner, handle, &bo);
        checkErrno(result, "bo_get");
        refusedIfForeign(result, me, other, handle, "another client's object was found");
        break;
      }
      case UapiOp::kBoWrite: {  // the client writes into its object through its mapping
        Bo* bo = pick(me.bos, r.b);
        if (bo == nullptr) break;
        const uint64_t offset = r.v % bo->size;
        const uint64_t bytes = std::min<uint64_t>(bo->size - offset, 1 + r.c);
        std::memset(board_.host_.at(bo->address + offset, bytes), r.c, bytes);
        ++me.writes;
        break;
      }
      case UapiOp::kProgramRegister:
        registerProgram(me, other, r);
        break;
      case UapiOp::kProgramRelease: {
        uint32_t handle = raw ? r.v : 0;
        if (!raw) {
          auto& programs = foreign ? other.programs : me.programs;
          if (!programs.empty()) handle = std::next(programs.begin(), r.b % programs.size())->first;
        }
        const int result = (r.c & 1) ? sable_core_program_release_wait(core_, me.owner, handle, 100 * kMillisecond)
                                     : sable_core_program_release(core_, me.owner, handle);
        checkErrno(result, "PROGRAM_RELEASE");
        if (result == 0) {
          check(!foreign || me.programs.count(handle) != 0 || other.programs.count(handle) == 0,
                "PROGRAM_RELEASE of another client's program succeeded");
          me.programs.erase(handle);
        }
        break;
      }
      case UapiOp::kJobSubmit:
        submit(me, other, r);
        break;
      case UapiOp::kFenceWait:
      case UapiOp::kFenceQuery:
      case UapiOp::kJobStatus:
      case UapiOp::kFenceRelease:
        fence(me, other, foreign, raw, r);
        break;
      case UapiOp::kReset: {
        // A device reset with both clients open: programs go stale, objects stay.
        const int result = sable_core_reset(core_, 5000 * kMillisecond);
        checkErrno(result, "reset");
        check(result == 0, "the reset did not bring the firmware back");
        break;
      }
      case UapiOp::kCount:
        break;
    }
  }

  // Both clients close; everything they held must come back.
  void close() {
    for (Client& c : clients_) sable_core_client_close(core_, c.owner);
  }

 private:
  uint32_t boHandle(Client& me, Client& other, bool foreign, bool raw, const UapiRequest& r) {
    if (raw) return r.v;
    Bo* bo = pick(foreign ? other.bos : me.bos, r.b);
    return bo == nullptr ? r.v : bo->handle;
  }
  // A request of `me` with a handle only the other client holds must fail.
  void refusedIfForeign(int result, const Client& me, const Client& other, uint32_t handle, const char* what) {
    const auto holds = [handle](const Client& c) {
      return std::any_of(c.bos.begin(), c.bos.end(), [&](const Bo& bo) { return bo.handle == handle; });
    };
    if (result == 0) check(!holds(other) || holds(me), what);
  }

  void registerProgram(Client& me, Client& other, const UapiRequest& r) {
    // b: lines of the copy (0: the empty stream); c bit 0: unsigned, bit 1: altered after signing,
    // bit 2: a region binding from v, bit 3: another client's object holds the stream.
    const uint32_t lines = r.b % 17;
    const std::vector<uint32_t> words = lines == 0 ? sable::kmdtest::emptyStream() : sable::kmdtest::copyStream(lines);
    const uint64_t bytes = words.size() * 4;
    Bo* holder = pick((r.c & 8) ? other.bos : me.bos, r.v);
    if (holder == nullptr || holder->size < bytes) return;
    std::memcpy(board_.host_.at(holder->address, bytes), words.data(), bytes);
    ++me.writes;
    ++other.writes;
    sable_uapi_program_register reg{};
    reg.stream_handle = holder->handle;
    reg.stream_size = (r.a & 8) ? r.v % (2 * bytes + 1) : bytes;
    reg.region_count = (r.a & 16) ? r.v % (SABLE_UAPI_MAX_REGIONS + 2) : (lines == 0 ? 0 : 2);
    if ((r.c & 1) == 0) {
      const auto signature =
          fuzzKey().signStream(std::span(reinterpret_cast<const uint8_t*>(words.data()), bytes));
      std::memcpy(reg.signature, signature.data(), signature.size());
    }
    if (r.c & 2) board_.host_.at(holder->address, bytes)[bytes - 1 - r.v % bytes] ^= 1;
    std::vector<sable_uapi_region_binding> bindings(std::min<uint32_t>(reg.region_count, SABLE_UAPI_MAX_REGIONS + 1));
    if ((r.c & 4) && !bindings.empty()) {
      Bo* constant = pick(me.bos, r.v >> 8);
      auto& binding = bindings[r.v % bindings.size()];
      binding.kind = (r.v >> 16) & 3;
      binding.handle = constant == nullptr ? r.v : constant->handle;
      binding.offset = (r.v >> 4) & 0xFFF;
      binding.size = (r.v >> 12) & 0xFFFF;
    }
    const int result = sable_core_program_register(core_, me.owner, &reg, bindings.data(), 5000 * kMillisecond);
    checkErrno(result, "PROGRAM_REGISTER");
    if (result == 0) {
      check((r.c & 3) == 0, "an unsigned or altered stream was registered");
      check((r.c & 8) == 0 || holder == pick(me.bos, r.v), "a stream in another client's object was registered");
      me.programs[reg.program] = (reg.region_count == 2 && reg.stream_size == bytes) ? lines : 0;
    }
  }

  void submit(Client& me, Client& other, const UapiRequest& r) {
    // b: the program; c: buffer table shape; v: offsets, sizes, deadline.
    uint32_t program = r.v;
    uint32_t lines = 0;
    const auto& programs = (r.a & 2) ? other.programs : me.programs;
    if (!(r.a & 4) && !programs.empty()) {
      const auto it = std::next(programs.begin(), r.b % programs.size());
      program = it->first;
      lines = (r.a & 2) ? 0 : it->second;
    }
    Bo* in = pick(me.bos, r.c);
    Bo* out = pick(me.bos, r.c >> 4);
    std::vector<sable_uapi_job_buffer> buffers;
    if (in != nullptr && out != nullptr) {
      const uint64_t bytes = uint64_t{lines} * 16;
      buffers.push_back({0, in->handle, 0, bytes});
      buffers.push_back({1, out->handle, 0, bytes});
      if (r.a & 8) {  // one entry mutated
        auto& entry = buffers[r.v & 1];
        switch ((r.v >> 1) & 3) {
          case 0: entry.offset = r.v >> 8; break;
          case 1: entry.size = r.v >> 8; break;
          case 2: entry.region = (r.v >> 8) & 0x3F; break;
          default: entry.handle = r.v; break;
        }
      }
      if (r.a & 16) buffers.resize((r.v >> 3) % 4);  // a table too short or too long
    }
    sable_uapi_job_submit job{};
    job.program = program;
    job.priority = (r.a & 32) ? (r.v >> 24) % 5 : SABLE_PRIORITY_HIGH;
    job.buffer_count = static_cast<uint32_t>(buffers.size());
    job.flags = (r.a & 64) ? r.c : 0;
    if (r.a & 128) {
      job.deadline_ns = sable::kmd::test::monotonicNs() + (r.v & 0xFFFF) * 1000;  // from now to 65 ms
    }
    // Another job of the client still pending may write the objects after this one ran (any
    // priority may overtake another): only a job submitted when all earlier ones had completed
    // has its output checked.
    const bool alone = std::all_of(me.jobs.begin(), me.jobs.end(),
                                   [&](const Job& j) { return sable_core_fence_wait(core_, me.owner, j.fence, 0) != -ETIMEDOUT; });
    uint32_t bad = 0;
    const int result = sable_core_job_submit(core_, me.owner, &job, buffers.data(), &bad);
    checkErrno(result, "JOB_SUBMIT");
    if (result != 0) return;
    check(!(r.a & 2) || me.programs.count(program) != 0, "a job of another client's program was accepted");
    ++me.writes;
    Job submitted{job.fence, 0, {}, {}, me.writes};
    // A copy of distinct objects whose table was not mutated: its output is checked.
    if (alone && lines != 0 && !(r.a & 24) && in->handle != out->handle) submitted = {job.fence, lines, *in, *out, me.writes};
    me.jobs.push_back(submitted);
  }

  void fence(Client& me, Client& other, bool foreign, bool raw, const UapiRequest& r) {
    Job* job = pick(foreign ? other.jobs : me.jobs, r.b);
    const uint64_t fence = (raw || job == nullptr) ? r.v : job->fence;
    const auto refused = [&](int result, const char* what) {
      if (result == 0 && foreign && job != nullptr && !raw) {
        const bool mine = std::any_of(me.jobs.begin(), me.jobs.end(), [&](const Job& j) { return j.fence == fence; });
        check(mine, what);
      }
    };
    switch (static_cast<UapiOp>(r.op % static_cast<uint8_t>(UapiOp::kCount))) {
      case UapiOp::kFenceWait: {
        const int result = sable_core_fence_wait(core_, me.owner, fence, (r.c % 50) * kMillisecond);
        checkErrno(result, "FENCE_WAIT");
        refused(result, "FENCE_WAIT on another client's fence succeeded");
        break;
      }
      case UapiOp::kFenceQuery: {
        uint32_t state = 0;
        sable_fw_completion completion{};
        const int result = sable_core_fence_query(core_, me.owner, fence, &state, &completion);
        checkErrno(result, "fence query");
        refused(result, "another client's fence was queried");
        break;
      }
      case UapiOp::kJobStatus: {
        sable_uapi_job_status status{};
        status.fence = fence;
        const int result = sable_core_job_status(core_, me.owner, &status);
        checkErrno(result, "JOB_STATUS");
        refused(result, "JOB_STATUS of another client's job succeeded");
        if (result == 0 && status.state == SABLE_JOB_COMPLETED && status.error_cause == SABLE_ERROR_NONE && !foreign &&
            job != nullptr && job->lines != 0 && job->writes == me.writes) {
          const uint64_t bytes = uint64_t{job->lines} * 16;
          check(std::memcmp(board_.host_.at(job->in.address, bytes), board_.host_.at(job->out.address, bytes), bytes) ==
                    0,
                "a copy job completed without error but its output is not its input");
          if (kTrace) std::fprintf(stderr, "uapi_fuzz: copy of %u lines checked\n", job->lines);
        }
        break;
      }
      default: {
        const int result = sable_core_fence_release(core_, me.owner, fence);
        checkErrno(result, "FENCE_RELEASE");
        refused(result, "FENCE_RELEASE of another client's fence succeeded");
        if (result == 0) std::erase_if(me.jobs, [&](const Job& j) { return j.fence == fence; });
        break;
      }
    }
  }

  sable::kmdtest::FirmwareBoard& board_;
  sable_core* core_;
  Client clients_[2];
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static uint64_t nextOwner = 1;
  sable::kmdtest::FirmwareBoard& b = board();
  sable_core* core = b.core_.get();
  static const uint64_t baseline = freeBytes(core);
  Session session(b, nextOwner);
  nextOwner += 2;
  for (size_t i = 0; i + sizeof(UapiRequest) <= size && i < 64 * sizeof(UapiRequest); i += sizeof(UapiRequest)) {
    UapiRequest r;
    std::memcpy(&r, data + i, sizeof r);
    session.run(r);
  }
  session.close();
  // Jobs still running finish and their objects are freed after them: wait for the memory (a
  // job of up to 16 lines on the functional model takes well under a millisecond).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (freeBytes(core) != baseline && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  if (freeBytes(core) != baseline) {
    std::fprintf(stderr, "uapi_fuzz: %llu bytes of device memory not reclaimed after both clients closed\n",
                 static_cast<unsigned long long>(baseline - freeBytes(core)));
    __builtin_trap();
  }
  uint32_t state = 0, version = 0;
  sable_core_firmware_status(core, &state, &version);
  check(state == SABLE_FW_STATE_READY, "the firmware is no longer READY after the clients closed");
  return 0;
}
