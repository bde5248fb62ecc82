// A client that holds a device node open while its device is removed (tests/guest/run-in-guest.sh,
// "removed-with-file-open"; docs/kmd.md "Removal with clients open"):
//
//   unplug_client NODE READY_FILE GO_FILE
//
// opens NODE through the UMD's transport (handshake), creates a buffer object, maps it, exports
// it as a dma-buf and maps that too, writes READY_FILE, then waits (60 s at most) for GO_FILE,
// which the test creates once it has removed the device. Then every operation on the open file
// must fail with ENODEV, both mappings must be gone (an access is SIGBUS), and closing everything
// must work. One line per check; exit 0 only when every check passed.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csetjmp>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "sable/shim/shim.h"
#include "uapi/sable_uapi.h"

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  std::printf("%s %s\n", ok ? "ok" : "FAILED", what);
  if (!ok) ++failures;
}

sigjmp_buf faultJump;

void onFault(int) { siglongjmp(faultJump, 1); }

// Whether reading the byte at `address` raises SIGBUS or SIGSEGV (the mapping is gone).
bool faults(const volatile uint8_t* address) {
  struct sigaction action {};
  struct sigaction oldBus {};
  struct sigaction oldSegv {};
  action.sa_handler = onFault;
  sigaction(SIGBUS, &action, &oldBus);
  sigaction(SIGSEGV, &action, &oldSegv);
  bool faulted = false;
  if (sigsetjmp(faultJump, 1) == 0) {
    (void)*address;
  } else {
    faulted = true;
  }
  sigaction(SIGBUS, &oldBus, nullptr);
  sigaction(SIGSEGV, &oldSegv, nullptr);
  return faulted;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s NODE READY_FILE GO_FILE\n", argv[0]);
    return 2;
  }
  sable_shim_device* device = nullptr;
  if (sable_shim_open(argv[1], 0, &device) != 0) {
    std::fprintf(stderr, "cannot open %s: %s\n", argv[1], sable_shim_last_error());
    return 1;
  }
  constexpr uint64_t kBytes = 64 * 1024;
  sable_uapi_bo_create create{};
  create.size = kBytes;
  if (sable_shim_ioctl(device, SABLE_IOCTL_BO_CREATE, &create) != 0) {
    std::fprintf(stderr, "BO_CREATE: %s\n", sable_shim_last_error());
    return 1;
  }
  auto* mapped = static_cast<uint8_t*>(sable_shim_mmap(device, kBytes, create.mmap_offset));
  sable_uapi_bo_export exported{};
  exported.handle = create.handle;
  exported.flags = SABLE_BO_EXPORT_CLOEXEC;
  if (mapped == nullptr || sable_shim_ioctl(device, SABLE_IOCTL_BO_EXPORT, &exported) != 0) {
    std::fprintf(stderr, "mmap or BO_EXPORT: %s\n", sable_shim_last_error());
    return 1;
  }
  auto* shared = static_cast<uint8_t*>(
      mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, exported.fd, 0));
  if (shared == MAP_FAILED) {
    std::perror("mmap of the dma-buf");
    return 1;
  }
  mapped[100] = 0x5a;
  check(shared[100] == 0x5a, "before the removal: the dma-buf maps the object's bytes");

  std::FILE* ready = std::fopen(argv[2], "w");
  if (ready == nullptr) {
    std::perror(argv[2]);
    return 1;
  }
  std::fputs("ready\n", ready);
  std::fclose(ready);
  struct stat go {};
  int waited = 0;
  while (stat(argv[3], &go) != 0 && waited < 600) {
    usleep(100 * 1000);
    ++waited;
  }
  if (waited >= 600) {
    std::fprintf(stderr, "%s did not appear within 60 s\n", argv[3]);
    return 1;
  }

  // The device is gone: the file stays open, every operation fails with ENODEV.
  sable_uapi_device_info info{};
  check(sable_shim_ioctl(device, SABLE_IOCTL_GET_INFO, &info) == -ENODEV, "GET_INFO is ENODEV");
  sable_uapi_bo_create another{};
  another.size = 4096;
  check(sable_shim_ioctl(device, SABLE_IOCTL_BO_CREATE, &another) == -ENODEV, "BO_CREATE is ENODEV");
  sable_uapi_bo_free release{create.handle, 0};
  check(sable_shim_ioctl(device, SABLE_IOCTL_BO_FREE, &release) == -ENODEV, "BO_FREE is ENODEV");
  check(sable_shim_mmap(device, kBytes, create.mmap_offset) == nullptr &&
            std::strstr(sable_shim_last_error(), std::strerror(ENODEV)) != nullptr,
        "a new mapping is ENODEV");
  errno = 0;
  check(mmap(nullptr, kBytes, PROT_READ, MAP_SHARED, exported.fd, 0) == MAP_FAILED && errno == ENODEV,
        "a new mapping of the dma-buf is ENODEV");
  check(faults(mapped + 100), "the node's mapping is gone (SIGBUS)");
  check(faults(shared + 100), "the dma-buf's mapping is gone (SIGBUS)");

  // Closing everything works (the kernel frees the device's state on the last close).
  check(munmap(shared, kBytes) == 0, "munmap of the dma-buf");
  check(close(exported.fd) == 0, "close of the dma-buf");
  check(sable_shim_munmap(device, mapped, kBytes) == 0, "munmap of the object");
  sable_shim_close(device);
  std::printf("closed\n");
  return failures == 0 ? 0 : 1;
}
