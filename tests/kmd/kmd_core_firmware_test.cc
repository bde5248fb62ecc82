// kmd/core driving the real firmware (sable_fw_main on its control-core thread, FirmwareHost of
// sim/server) over the functional model of the NPU, with no device server in between: the
// Linux module's logic (boot block, buffer objects, program registration with the firmware's
// signature check and validation, jobs, fences, status, reclamation) checked against the
// firmware it will talk to on a board. Device memory is the test's byte array.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "kmd_core_board.h"
#include "kmd_support.h"
#include "sable/isa.h"
#include "sable/kmd/core.h"
#include "sable/kmd/layout.h"
#include "sable/sim/func_model.h"
#include "sable/umd/signing.h"

namespace sable::kmdtest {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

class KmdCoreOnFirmware : public ::testing::Test, protected FirmwareBoard {
 protected:
  void SetUp() override {
    auto key = umd::SigningKey::processKey();
    ASSERT_TRUE(key.ok()) << key.error().message;
    ASSERT_EQ(start(**key), "");
  }
  void TearDown() override { halt(); }

  uint32_t createBo(uint64_t size, uint64_t owner = 1, uint64_t* address = nullptr) {
    sable_uapi_bo_create create{};
    create.size = size;
    EXPECT_EQ(sable_core_bo_create(core_.get(), owner, &create), 0);
    if (address != nullptr) *address = create.device_address;
    return create.handle;
  }
  // Writes the stream into a new buffer object and registers it, signed by the driver's key
  // unless `sign` is false. Returns the ioctl's result; *program is the handle.
  int registerStream(const std::vector<uint32_t>& words, uint32_t regionCount, uint32_t* program,
                     sable_uapi_program_register* out = nullptr, bool sign = true, uint64_t owner = 1) {
    uint64_t address = 0;
    const uint64_t bytes = words.size() * 4;
    const uint32_t bo = createBo(bytes, owner, &address);
    std::memcpy(host_.at(address, bytes), words.data(), bytes);
    sable_uapi_program_register reg{};
    reg.stream_handle = bo;
    reg.stream_size = bytes;
    reg.region_count = regionCount;
    if (sign) {
      const crypto::Signature signature = key_->signStream(std::span(reinterpret_cast<const uint8_t*>(words.data()), bytes));
      std::memcpy(reg.signature, signature.data(), signature.size());
    }
    std::vector<sable_uapi_region_binding> bindings(regionCount);  // all JOB regions
    const int result = sable_core_program_register(core_.get(), owner, &reg, bindings.data(), 5 * kSecond);
    *program = reg.program;
    if (out != nullptr) *out = reg;
    return result;
  }
};

TEST_F(KmdCoreOnFirmware, ACopyJobRunsThroughTheRealFirmwareAndItsStatusHasTheCounters) {
  constexpr uint32_t kLines = 8;
  uint32_t program = 0;
  sable_uapi_program_register reg{};
  ASSERT_EQ(registerStream(copyStream(kLines), 2, &program, &reg), 0);
  EXPECT_NE(program, 0u);
  EXPECT_EQ(reg.region_extent[0], kLines * 16u) << "the firmware's validation measured the regions";
  EXPECT_EQ(reg.region_extent[1], kLines * 16u);

  uint64_t in = 0, out = 0;
  const uint32_t input = createBo(4096, 1, &in);
  const uint32_t output = createBo(4096, 1, &out);
  for (uint32_t i = 0; i < kLines * 16; ++i) host_.at(in, kLines * 16)[i] = static_cast<uint8_t>(i * 7 + 1);
  sable_uapi_job_buffer buffers[2] = {{0, input, 0, kLines * 16}, {1, output, 0, kLines * 16}};
  sable_uapi_job_submit submit{};
  submit.program = program;
  submit.buffer_count = 2;
  submit.priority = SABLE_PRIORITY_HIGH;
  uint32_t bad = 0;
  ASSERT_EQ(sable_core_job_submit(core_.get(), 1, &submit, buffers, &bad), 0);
  ASSERT_EQ(sable_core_fence_wait(core_.get(), 1, submit.fence, 5 * kSecond), 0);
  EXPECT_EQ(std::memcmp(host_.at(out, kLines * 16), host_.at(in, kLines * 16), kLines * 16), 0);

  sable_uapi_job_status status{};
  status.fence = submit.fence;
  ASSERT_EQ(sable_core_job_status(core_.get(), 1, &status), 0);
  EXPECT_EQ(status.state, SABLE_JOB_COMPLETED);
  EXPECT_EQ(status.error_cause, SABLE_ERROR_NONE);
  EXPECT_GT(status.counter_count, 0u);
  EXPECT_GT(status.counters[0], 0u) << "cycles";
  EXPECT_LE(status.submit_ns, status.start_ns);
  EXPECT_LE(status.start_ns, status.end_ns);
  EXPECT_EQ(sable_core_fence_release(core_.get(), 1, submit.fence), 0);
  EXPECT_EQ(sable_core_bo_free(core_.get(), 1, output), 0);
  EXPECT_EQ(sable_core_program_release(core_.get(), 1, program), 0);
}

TEST_F(KmdCoreOnFirmware, AnUnsignedOrAlteredStreamIsRefusedByTheFirmwareWithItsCause) {
  uint32_t program = 7;
  sable_uapi_program_register reg{};
  EXPECT_EQ(registerStream(emptyStream(), 0, &program, &reg, /*sign=*/false), -ENOEXEC);
  EXPECT_EQ(reg.error_cause, SABLE_ERROR_BAD_SIGNATURE);
  EXPECT_EQ(program, 0u);

  // Signed, then changed: the signature covers the bytes the firmware runs.
  std::vector<uint32_t> words = copyStream(4);
  uint64_t address = 0;
  const uint64_t bytes = words.size() * 4;
  const uint32_t bo = createBo(bytes, 1, &address);
  const crypto::Signature signature = key_->signStream(std::span(reinterpret_cast<const uint8_t*>(words.data()), bytes));
  words.back() ^= 1;  // after signing
  std::memcpy(host_.at(address, bytes), words.data(), bytes);
  sable_uapi_program_register altered{};
  altered.stream_handle = bo;
  altered.stream_size = bytes;
  altered.region_count = 2;
  std::memcpy(altered.signature, signature.data(), signature.size());
  sable_uapi_region_binding bindings[2] = {};
  EXPECT_EQ(sable_core_program_register(core_.get(), 1, &altered, bindings, 5 * kSecond), -ENOEXEC);
  EXPECT_EQ(altered.error_cause, SABLE_ERROR_BAD_SIGNATURE);
}

TEST_F(KmdCoreOnFirmware, AnInvalidSignedStreamIsRefusedByTheFirmwaresValidation) {
  uint32_t program = 0;
  sable_uapi_program_register reg{};
  Command bad{};
  sable_cmd_set_opcode(bad.data(), 0x3F);  // no such opcode
  EXPECT_EQ(registerStream(makeStream({bad}), 0, &program, &reg), -ENOEXEC);
  EXPECT_EQ(reg.error_cause, SABLE_ERROR_UNKNOWN_OPCODE);
  EXPECT_EQ(reg.error_command, 0u);
}

TEST_F(KmdCoreOnFirmware, ManyJobsOfSeveralClientsCompleteAndAClosedClientIsReclaimed) {
  uint32_t programA = 0, programB = 0;
  ASSERT_EQ(registerStream(copyStream(4), 2, &programA, nullptr, true, 1), 0);
  ASSERT_EQ(registerStream(copyStream(4), 2, &programB, nullptr, true, 2), 0);
  const uint64_t freeBefore = core_->allocator.free_bytes;
  const uint32_t inA = createBo(64, 1), outA = createBo(64, 1);
  const uint32_t inB = createBo(64, 2), outB = createBo(64, 2);
  std::vector<uint64_t> fences;
  for (int i = 0; i < 40; ++i) {
    const bool a = i % 2 == 0;
    sable_uapi_job_buffer buffers[2] = {{0, a ? inA : inB, 0, 64}, {1, a ? outA : outB, 0, 64}};
    sable_uapi_job_submit submit{};
    submit.program = a ? programA : programB;
    submit.buffer_count = 2;
    submit.priority = static_cast<uint32_t>(i % 3);
    uint32_t bad = 0;
    ASSERT_EQ(sable_core_job_submit(core_.get(), a ? 1 : 2, &submit, buffers, &bad), 0);
    fences.push_back(submit.fence);
  }
  // Client 2 goes away with its jobs in flight; client 1 waits for all of its own.
  sable_core_client_close(core_.get(), 2);
  for (size_t i = 0; i < fences.size(); i += 2) {
    ASSERT_EQ(sable_core_fence_wait(core_.get(), 1, fences[i], 5 * kSecond), 0);
    ASSERT_EQ(sable_core_fence_release(core_.get(), 1, fences[i]), 0);
  }
  // Client 2's jobs end on their own; then its program and buffers are gone from the device.
  // The program's state under the core's lock: the completions change it on the firmware's thread.
  const auto programState = [&] {
    os_.lock(os_.ctx);
    const uint32_t state = core_->programs[(programB & 0xFFFF) - 1].state;
    os_.unlock(os_.ctx);
    return state;
  };
  for (int i = 0; i < 500 && programState() != SABLE_CORE_PROGRAM_FREE; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(programState(), SABLE_CORE_PROGRAM_FREE)
      << "the closed client's program was released in the firmware";
  for (size_t i = 1; i < fences.size(); i += 2) {
    EXPECT_EQ(sable_core_fence_wait(core_.get(), 2, fences[i], 0), -ENOENT) << "an orphaned fence is nobody's";
  }
  sable_core_counters counters{};
  sable_core_get_counters(core_.get(), &counters);
  EXPECT_EQ(counters.jobs_completed, 40u);
  EXPECT_EQ(counters.jobs_failed, 0u);
  EXPECT_EQ(counters.stray_completions, 0u);
  // Client 1 holds its 2 new buffers (a page each); client 2's 2 buffers, its stream's buffer
  // object and the program's copy of the stream (a page each) are free again.
  EXPECT_EQ(core_->allocator.free_bytes, freeBefore - 2 * 4096 + 2 * 4096);
}

TEST_F(KmdCoreOnFirmware, AJobPastItsDeadlineEndsWithTheFirmwaresDeadlineCause) {
  uint32_t program = 0;
  ASSERT_EQ(registerStream(copyStream(4), 2, &program), 0);
  const uint32_t in = createBo(64), out = createBo(64);
  sable_uapi_job_buffer buffers[2] = {{0, in, 0, 64}, {1, out, 0, 64}};
  sable_uapi_job_submit submit{};
  submit.program = program;
  submit.buffer_count = 2;
  submit.deadline_ns = 1;  // long past
  uint32_t bad = 0;
  ASSERT_EQ(sable_core_job_submit(core_.get(), 1, &submit, buffers, &bad), 0);
  ASSERT_EQ(sable_core_fence_wait(core_.get(), 1, submit.fence, 5 * kSecond), 0);
  sable_uapi_job_status status{};
  status.fence = submit.fence;
  ASSERT_EQ(sable_core_job_status(core_.get(), 1, &status), 0);
  EXPECT_EQ(status.error_cause, SABLE_ERROR_DEADLINE);
}

TEST_F(KmdCoreOnFirmware, AFirmwareHungMidJobIsDetectedResetAndTheNextJobRunsCorrectly) {
  constexpr uint32_t kLines = 8, kBytes = kLines * 16;
  uint32_t program = 0;
  ASSERT_EQ(registerStream(copyStream(kLines), 2, &program), 0);
  uint64_t in = 0, out = 0;
  const uint32_t input = createBo(4096, 1, &in), output = createBo(4096, 1, &out);
  for (uint32_t i = 0; i < kBytes; ++i) host_.at(in, kBytes)[i] = static_cast<uint8_t>(i * 5 + 3);
  sable_uapi_job_buffer buffers[2] = {{0, input, 0, kBytes}, {1, output, 0, kBytes}};
  auto submit = [&](uint32_t handle, uint64_t* fence) {
    sable_uapi_job_submit arg{};
    arg.program = handle;
    arg.buffer_count = 2;
    uint32_t bad = 0;
    const int result = sable_core_job_submit(core_.get(), 1, &arg, buffers, &bad);
    *fence = arg.fence;
    return result;
  };

  npu_->injectFault(sim::Fault::HungUnit);  // the job starts and never progresses
  uint64_t hung = 0;
  ASSERT_EQ(submit(program, &hung), 0);
  std::thread waiter([&] { EXPECT_EQ(sable_core_fence_wait(core_.get(), 1, hung, 10 * kSecond), -EIO); });
  // What the module's health work does every period: 50 ms without progress is a hang here.
  const auto start = std::chrono::steady_clock::now();
  while (sable_core_hung(core_.get(), 50'000'000) == 0) {
    ASSERT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << "the hang was never detected";
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(sable_core_reset(core_.get(), 5 * kSecond), 0);
  waiter.join();
  sable_uapi_job_status status{};
  status.fence = hung;
  EXPECT_EQ(sable_core_job_status(core_.get(), 1, &status), -EIO);
  EXPECT_EQ(sable_core_fence_release(core_.get(), 1, hung), 0);
  uint32_t state = 0, version = 0;
  sable_core_firmware_status(core_.get(), &state, &version);
  EXPECT_EQ(state, SABLE_FW_STATE_READY) << "a new firmware accepted the new boot block";

  uint64_t next = 0;
  EXPECT_EQ(submit(program, &next), -ESTALE) << "the firmware forgot the program";
  uint32_t again = 0;
  ASSERT_EQ(registerStream(copyStream(kLines), 2, &again), 0) << "registered again, signature checked again";
  std::memset(host_.at(out, kBytes), 0, kBytes);
  ASSERT_EQ(submit(again, &next), 0);
  ASSERT_EQ(sable_core_fence_wait(core_.get(), 1, next, 5 * kSecond), 0);
  status = {};
  status.fence = next;
  ASSERT_EQ(sable_core_job_status(core_.get(), 1, &status), 0);
  EXPECT_EQ(status.error_cause, SABLE_ERROR_NONE) << sable_error_cause_name(status.error_cause);
  for (uint32_t i = 0; i < kBytes; ++i) {
    ASSERT_EQ(host_.at(out, kBytes)[i], static_cast<uint8_t>(i * 5 + 3)) << "byte " << i << " of the copy";
  }
  sable_core_counters counters{};
  sable_core_get_counters(core_.get(), &counters);
  EXPECT_EQ(counters.resets, 1u);
  EXPECT_EQ(counters.jobs_lost, 1u);
  EXPECT_EQ(counters.stray_completions, 0u) << "the aborted job's record was not applied to a new job";
}

TEST_F(KmdCoreOnFirmware, ConcurrentSubmittersRideThroughAKilledFirmwareAndItsReset) {
  constexpr int kClients = 3, kJobsEach = 40;
  constexpr uint32_t kLines = 4, kBytes = kLines * 16;
  std::atomic<int> completed{0}, lost{0}, aborted{0};
  std::atomic<bool> failed{false};
  uint64_t in[kClients + 1] = {}, out[kClients + 1] = {};
  uint32_t input[kClients + 1] = {}, output[kClients + 1] = {};
  for (int c = 1; c <= kClients; ++c) {
    input[c] = createBo(4096, static_cast<uint64_t>(c), &in[c]);
    output[c] = createBo(4096, static_cast<uint64_t>(c), &out[c]);
  }
  // Registers (again); -EIO while the device is lost and not reset yet.
  auto registerCopy = [&](uint64_t owner, uint32_t* program) {
    for (int attempt = 0; attempt < 5000; ++attempt) {
      const int result = registerStream(copyStream(kLines), 2, program, nullptr, true, owner);
      if (result != -EIO) return result == 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  };
  auto client = [&](uint64_t owner) {
    uint32_t program = 0;
    if (!registerCopy(owner, &program)) return (void)(failed = true);
    const uint32_t inputBo = input[owner], outputBo = output[owner];
    const uint64_t inAddress = in[owner], outAddress = out[owner];
    for (int done = 0, attempt = 0; done < kJobsEach && attempt < 100 * kJobsEach; ++attempt) {
      for (uint32_t i = 0; i < kBytes; ++i) host_.at(inAddress, kBytes)[i] = static_cast<uint8_t>(owner * 31 + attempt + i);
      sable_uapi_job_buffer buffers[2] = {{0, inputBo, 0, kBytes}, {1, outputBo, 0, kBytes}};
      sable_uapi_job_submit arg{};
      arg.program = program;
      arg.buffer_count = 2;
      arg.priority = static_cast<uint32_t>(owner % 3);
      uint32_t bad = 0;
      const int submitted = sable_core_job_submit(core_.get(), owner, &arg, buffers, &bad);
      if (submitted == -ESTALE) {  // what umd::Device does: register again, submit again
        if (!registerCopy(owner, &program)) return (void)(failed = true);
        continue;
      }
      if (submitted == -EIO || submitted == -ENOMEM) {  // lost and not reset yet, or a full table
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      if (submitted != 0) return (void)(failed = true);
      const int waited = sable_core_fence_wait(core_.get(), owner, arg.fence, 10 * kSecond);
      sable_uapi_job_status status{};
      status.fence = arg.fence;
      if (waited == 0 && sable_core_job_status(core_.get(), owner, &status) != 0) return (void)(failed = true);
      if (waited == -EIO) {
        lost += 1;
      } else if (waited == 0 && status.error_cause == SABLE_ERROR_ABORTED) {
        aborted += 1;  // the job the firmware was running when it was halted
      } else if (waited != 0 || status.error_cause != SABLE_ERROR_NONE ||
                 std::memcmp(host_.at(outAddress, kBytes), host_.at(inAddress, kBytes), kBytes) != 0) {
        return (void)(failed = true);  // a job that completed must have copied its own input
      } else {
        completed += 1;
        done += 1;
      }
      EXPECT_EQ(sable_core_fence_release(core_.get(), owner, arg.fence), 0);
    }
  };
  std::vector<std::thread> clients;
  for (int c = 1; c <= kClients; ++c) clients.emplace_back(client, static_cast<uint64_t>(c));
  while (completed < kClients * kJobsEach / 4) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // The control core dies with jobs in flight (HALT: its job aborted, HALTED published); the
  // health check sees the firmware not READY and resets. Halted only once a job is pending, so
  // that a machine busy enough to leave every client between two jobs does not halt an idle
  // firmware (the state is read without kmd/core's lock: a hint, hence atomically).
  auto jobPending = [&] {
    for (sable_core_fence& f : core_->fences) {
      if (__atomic_load_n(&f.state, __ATOMIC_ACQUIRE) == SABLE_CORE_FENCE_PENDING) return true;
    }
    return false;
  };
  while (!jobPending() && completed < kClients * kJobsEach) std::this_thread::yield();
  firmware_.load()->halt();
  uint32_t state = 0, version = 0;
  sable_core_firmware_status(core_.get(), &state, &version);
  ASSERT_EQ(state, SABLE_FW_STATE_HALTED);
  ASSERT_EQ(sable_core_reset(core_.get(), 5 * kSecond), 0);
  for (std::thread& t : clients) t.join();
  EXPECT_FALSE(failed) << "a client saw an error other than the reset's, or a wrong copy";
  EXPECT_EQ(completed, kClients * kJobsEach) << "every client finished its jobs after the reset";
  sable_core_counters counters{};
  sable_core_get_counters(core_.get(), &counters);
  EXPECT_EQ(counters.resets, 1u);
  EXPECT_EQ(counters.jobs_lost, static_cast<uint64_t>(lost)) << "each lost job was seen lost by its client";
  EXPECT_EQ(counters.stray_completions, 0u);
  EXPECT_LE(aborted, 1) << "only the job running at the halt is aborted";
  EXPECT_GT(lost + aborted, 0) << "the firmware died with jobs in flight";
  for (const sable_core_fence& f : core_->fences) EXPECT_EQ(f.state, SABLE_CORE_FENCE_FREE) << "a fence leaked";
}

}  // namespace
}  // namespace sable::kmdtest
