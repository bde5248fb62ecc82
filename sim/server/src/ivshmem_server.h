// The server side of QEMU's ivshmem protocol (QEMU's docs/specs/ivshmem-spec.rst), as
// `sable-simd --pci-socket` serves the NPU card to a guest's ivshmem-doorbell device
// (docs/kmd-bringup.md, "The ivshmem transport"). Debian ships no ivshmem server.
//
// On a UNIX stream socket, every message is a little-endian int64, some with a file descriptor
// (SCM_RIGHTS). On connect the server sends: the protocol version (0); the new peer's ID; -1 with
// the shared-memory fd; then, for every peer including the server itself and finally the new
// peer, the peer's ID once per vector, each with that vector's eventfd. The server is a peer
// (ID 0) so that the guest can ring it: ivshmem's Doorbell register signals the destination
// peer's eventfd. A peer sends nothing; bytes from a peer are reported and dropped, and a peer
// that closes its socket is gone.
//
// One guest at a time drives the card: a second connection is refused (closed) with a message.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "shared_device.h"  // Expected

namespace sable::server {

class IvshmemServer {
 public:
  struct Hooks {
    std::function<void()> doorbell;          // the guest rang the server (vector 0)
    std::function<void(uint32_t)> connected; // a guest attached, with its peer ID
    std::function<void(const std::string&)> disconnected;  // why
  };
  static constexpr uint32_t kServerPeer = 0;

  // Binds `path` (a stale socket file of a dead server is replaced; a live server's is not) and
  // shares `memoryFd` (not owned) with every guest; `vectors` eventfds per peer.
  static Expected<std::unique_ptr<IvshmemServer>> create(const std::string& path, int memoryFd,
                                                         uint32_t vectors, Hooks hooks);
  ~IvshmemServer();
  IvshmemServer(const IvshmemServer&) = delete;
  IvshmemServer& operator=(const IvshmemServer&) = delete;

  // Serves connections, doorbells and disconnections until stop() (from any thread or a signal
  // handler); `tick` runs at least every `tickMs` (the card's timer).
  void run(uint32_t tickMs, const std::function<void()>& tick);
  void stop();
  // Raises the attached guest's interrupt `vector` (its MSI-X vector); false without a guest.
  bool interrupt(uint32_t vector = 0);
  uint64_t protocolErrors() const { return protocolErrors_.load(); }

 private:
  IvshmemServer(std::string path, int listenFd, int memoryFd, uint32_t vectors, Hooks hooks);
  void accept();
  bool sendMessage(int socket, int64_t value, int fd);
  void dropGuest(const std::string& why);
  void serveGuestSocket();

  std::string path_;
  int listenFd_ = -1;
  int memoryFd_ = -1;
  uint32_t vectors_ = 1;
  Hooks hooks_;
  int stopFd_ = -1;                     // eventfd: stop()
  std::vector<int> serverVectors_;      // the server's eventfds (what the guest's Doorbell signals)
  int guestSocket_ = -1;
  uint32_t guestPeer_ = 0;
  uint32_t nextPeer_ = 1;
  std::vector<int> guestVectors_;       // the guest's eventfds (its MSI-X vectors)
  std::mutex interruptMutex_;           // interrupt() against dropGuest() closing the fds
  std::atomic<uint64_t> protocolErrors_{0};
};

}  // namespace sable::server
