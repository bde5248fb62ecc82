#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "sable/hal/shared_memory.h"

namespace sable::hal {
namespace {

TEST(SharedMemory, IsZeroFilledAndWritable) {
  auto memory = SharedMemory::create(4096);
  ASSERT_TRUE(memory.ok()) << memory.error().message;
  for (uint8_t b : (*memory)->bytes()) ASSERT_EQ(b, 0);
  (*memory)->data()[4095] = 7;
  EXPECT_EQ((*memory)->data()[4095], 7);
}

TEST(SharedMemory, IsSharedWithAChildProcess) {
  auto memory = SharedMemory::create(64);
  ASSERT_TRUE(memory.ok());
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child maps the same descriptor anew, as another process would after receiving it.
    auto mapped = SharedMemory::fromFd((*memory)->fd(), 64);
    if (!mapped.ok()) _exit(2);
    (*mapped)->data()[10] = 42;
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ((*memory)->data()[10], 42);
}

TEST(SharedMemory, RejectsBadDescriptorsAndOversizedMaps) {
  auto bad = SharedMemory::fromFd(-1, 16);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().status, ErrorStatus::INVALID_ARGUMENT);
  auto memory = SharedMemory::create(16);
  ASSERT_TRUE(memory.ok());
  auto tooBig = SharedMemory::fromFd((*memory)->fd(), 1 << 20);
  ASSERT_FALSE(tooBig.ok());
  EXPECT_EQ(tooBig.error().status, ErrorStatus::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace sable::hal
