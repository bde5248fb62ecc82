// The HAL layer's reading of cache files (hal/cache_files.h): a data cache is read once, in
// chunks handed over as they are read (by the caller, and by a helper that joins in), and a file
// that changes size meanwhile is refused.
#include "sable/hal/cache_files.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace sable::hal {
namespace {

// A file in memory holding `bytes`.
class MemoryFile {
 public:
  explicit MemoryFile(const std::vector<uint8_t>& bytes) : fd_(::memfd_create("cache", 0)) {
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(::pwrite(fd_, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  }
  ~MemoryFile() { ::close(fd_); }
  int fd() const { return fd_; }

 private:
  int fd_;
};

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i * 131 + i / 251);
  return bytes;
}

struct Received {
  std::mutex mutex;
  std::map<uint64_t, std::vector<uint8_t>> chunks;
  std::set<std::thread::id> threads;
};

Result<void> readAll(int fd, uint64_t size, uint64_t chunkBytes, Received& received) {
  return CacheFileRead(fd, size, chunkBytes, [&](uint64_t offset, std::span<const uint8_t> chunk) -> Result<void> {
    std::lock_guard lock(received.mutex);
    if (!received.chunks.emplace(offset, std::vector<uint8_t>(chunk.begin(), chunk.end())).second) {
      return generalFailure("chunk at {} twice", offset);
    }
    received.threads.insert(std::this_thread::get_id());
    return {};
  }).run();
}

TEST(CacheFiles, EveryChunkOfTheFileArrivesOnceAndTogetherTheyAreTheFile) {
  for (const size_t size : {size_t{0}, size_t{1}, size_t{4096}, size_t{4097}, size_t{40000}, size_t{65536}}) {
    const std::vector<uint8_t> bytes = pattern(size);
    MemoryFile file(bytes);
    Received received;
    ASSERT_TRUE(readAll(file.fd(), size, 4096, received).ok()) << size;
    std::vector<uint8_t> joined;
    uint64_t expected = 0;
    for (const auto& [offset, chunk] : received.chunks) {
      EXPECT_EQ(offset, expected) << size << ": chunks are consecutive, none missing";
      EXPECT_EQ(chunk.size(), std::min<size_t>(4096, size - offset)) << size << " at " << offset;
      joined.insert(joined.end(), chunk.begin(), chunk.end());
      expected += chunk.size();
    }
    EXPECT_EQ(joined, bytes) << size;
    EXPECT_LE(received.threads.size(), 1u) << "the caller's thread reads";
  }
}

TEST(CacheFiles, AFileThatGrewOrShrankSinceItsSizeWasTakenIsRefused) {
  const std::vector<uint8_t> bytes = pattern(20000);
  MemoryFile file(bytes);
  Received grew;
  auto result = readAll(file.fd(), 19999, 4096, grew);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("it grew while it was read"), std::string::npos) << result.error().message;
  Received shrank;
  result = readAll(file.fd(), 20001, 4096, shrank);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("it shrank while it was read"), std::string::npos) << result.error().message;
  EXPECT_EQ(result.error().status, ErrorStatus::GENERAL_FAILURE);
}

TEST(CacheFiles, TheFirstErrorOfAChunkEndsTheReadAndIsReturned) {
  const std::vector<uint8_t> bytes = pattern(100 * 4096);
  MemoryFile file(bytes);
  std::mutex mutex;
  size_t calls = 0;
  auto result = CacheFileRead(file.fd(), bytes.size(), 4096, [&](uint64_t offset, std::span<const uint8_t>) -> Result<void> {
    std::lock_guard lock(mutex);
    ++calls;
    if (offset == 4 * 4096) return invalidArgument("the driver refuses chunk 4");
    return {};
  }).run();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_EQ(result.error().message, "the driver refuses chunk 4");
  EXPECT_EQ(calls, 5u) << "reading stopped at the failing chunk";
}

// A thread that becomes free during the read helps (the sable-npu driver's worker): every chunk
// still arrives once, run() returns only after the helper's chunks are in, and a helper that
// comes after the read reads nothing.
TEST(CacheFiles, AHelperReadsChunksAlongsideAndNothingAfterTheRead) {
  const std::vector<uint8_t> bytes = pattern(64 * 4096 + 100);
  MemoryFile file(bytes);
  Received received;
  std::atomic<bool> helperStarted{false};
  auto read = std::make_shared<CacheFileRead>(
      file.fd(), bytes.size(), 4096, [&](uint64_t offset, std::span<const uint8_t> chunk) -> Result<void> {
        {
          std::lock_guard lock(received.mutex);
          if (!received.chunks.emplace(offset, std::vector<uint8_t>(chunk.begin(), chunk.end())).second) {
            return generalFailure("chunk at {} twice", offset);
          }
          received.threads.insert(std::this_thread::get_id());
        }
        // Slow chunks, so that the helper started below finds some left.
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return {};
      });
  std::thread helper([&] {
    helperStarted = true;
    read->help();
  });
  while (!helperStarted) std::this_thread::yield();
  ASSERT_TRUE(read->run().ok());
  {
    std::lock_guard lock(received.mutex);
    EXPECT_EQ(received.chunks.size(), 65u) << "every chunk once, the helper's included, when run() returns";
    std::vector<uint8_t> joined;
    for (const auto& [offset, chunk] : received.chunks) joined.insert(joined.end(), chunk.begin(), chunk.end());
    EXPECT_EQ(joined, bytes);
  }
  helper.join();
  EXPECT_EQ(received.threads.size(), 2u) << "the helper took part";
  const size_t before = received.chunks.size();
  read->help();  // after the read: returns at once
  EXPECT_EQ(received.chunks.size(), before);
}

TEST(CacheFiles, AnUnreadableDescriptorIsAGeneralFailure) {
  int pipe[2];
  ASSERT_EQ(::pipe(pipe), 0);
  ::close(pipe[1]);
  Received received;
  auto result = readAll(pipe[1], 10, 4, received);  // closed
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_NE(result.error().message.find("read"), std::string::npos) << result.error().message;
  EXPECT_TRUE(received.chunks.empty());
  EXPECT_FALSE(CacheFileRead(pipe[0], 10, 0, [](uint64_t, std::span<const uint8_t>) -> Result<void> { return {}; })
                   .run()
                   .ok())
      << "chunks of 0 bytes";
  ::close(pipe[0]);
}

}  // namespace
}  // namespace sable::hal
