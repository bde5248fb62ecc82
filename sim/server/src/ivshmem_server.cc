#include "ivshmem_server.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

namespace sable::server {

namespace {

constexpr int64_t kProtocolVersion = 0;

void closeFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

Expected<std::unique_ptr<IvshmemServer>> IvshmemServer::create(const std::string& path, int memoryFd,
                                                               uint32_t vectors, Hooks hooks) {
  using Result = Expected<std::unique_ptr<IvshmemServer>>;
  sockaddr_un address{};
  if (path.empty() || path.size() >= sizeof(address.sun_path)) {
    return Result::failure(fmt::format("--pci-socket '{}': a socket path of 1 to {} characters", path,
                                       sizeof(address.sun_path) - 1));
  }
  if (vectors == 0 || vectors > 64) return Result::failure("ivshmem: 1 to 64 vectors");
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Result::failure(fmt::format("socket: {}", std::strerror(errno)));
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    const int err = errno;
    // A socket file is there: another server's if something accepts on it, else a dead one's.
    const int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool live = err == EADDRINUSE && connect(probe, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    close(probe);
    struct stat info {};
    const bool stale = err == EADDRINUSE && !live && stat(path.c_str(), &info) == 0 && S_ISSOCK(info.st_mode);
    if (!stale || unlink(path.c_str()) != 0 ||
        bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      close(fd);
      return Result::failure(fmt::format("--pci-socket '{}': {}", path,
                                         live ? "another server is listening there"
                                              : fmt::format("bind: {}", std::strerror(err))));
    }
  }
  if (listen(fd, 4) != 0) {
    const int err = errno;
    close(fd);
    return Result::failure(fmt::format("--pci-socket '{}': listen: {}", path, std::strerror(err)));
  }
  std::unique_ptr<IvshmemServer> server(new IvshmemServer(path, fd, memoryFd, vectors, std::move(hooks)));
  for (uint32_t v = 0; v < vectors; ++v) {
    const int event = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (event < 0) return Result::failure(fmt::format("eventfd: {}", std::strerror(errno)));
    server->serverVectors_.push_back(event);
  }
  if (server->stopFd_ < 0) return Result::failure(fmt::format("eventfd: {}", std::strerror(errno)));
  return server;
}

IvshmemServer::IvshmemServer(std::string path, int listenFd, int memoryFd, uint32_t vectors, Hooks hooks)
    : path_(std::move(path)), listenFd_(listenFd), memoryFd_(memoryFd), vectors_(vectors),
      hooks_(std::move(hooks)), stopFd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

IvshmemServer::~IvshmemServer() {
  {
    std::lock_guard lock(interruptMutex_);
    closeFd(guestSocket_);
    for (int& fd : guestVectors_) closeFd(fd);
    guestVectors_.clear();
  }
  for (int& fd : serverVectors_) closeFd(fd);
  closeFd(listenFd_);
  closeFd(stopFd_);
  unlink(path_.c_str());
}

void IvshmemServer::stop() {
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = write(stopFd_, &one, sizeof one);  // async-signal-safe
}

bool IvshmemServer::interrupt(uint32_t vector) {
  std::lock_guard lock(interruptMutex_);
  if (vector >= guestVectors_.size()) return false;
  const uint64_t one = 1;
  return write(guestVectors_[vector], &one, sizeof one) == static_cast<ssize_t>(sizeof one);
}

// One int64 (QEMU reads them in host byte order: little-endian on every host it serves us on),
// with `fd` attached when it is not -1.
bool IvshmemServer::sendMessage(int socket, int64_t value, int fd) {
  iovec io{&value, sizeof value};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(header), &fd, sizeof fd);
  }
  return sendmsg(socket, &message, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof value);
}

void IvshmemServer::accept() {
  const int socket = accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (socket < 0) return;
  if (guestSocket_ >= 0) {
    std::cerr << fmt::format("sable-simd: a second guest connected to {} while peer {} is attached: refused "
                             "(one guest drives the card)\n",
                             path_, guestPeer_);
    close(socket);
    return;
  }
  const uint32_t peer = nextPeer_++;
  std::vector<int> vectors;
  for (uint32_t v = 0; v < vectors_; ++v) {
    const int event = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (event < 0) break;
    vectors.push_back(event);
  }
  bool sent = vectors.size() == vectors_ && sendMessage(socket, kProtocolVersion, -1) &&
              sendMessage(socket, peer, -1) && sendMessage(socket, -1, memoryFd_);
  for (uint32_t v = 0; sent && v < vectors_; ++v) sent = sendMessage(socket, kServerPeer, serverVectors_[v]);
  for (uint32_t v = 0; sent && v < vectors_; ++v) sent = sendMessage(socket, peer, vectors[v]);
  if (!sent) {
    std::cerr << fmt::format("sable-simd: the ivshmem handshake with a new guest failed ({}); waiting for "
                             "another\n",
                             std::strerror(errno));
    for (int& fd : vectors) closeFd(fd);
    close(socket);
    return;
  }
  {
    std::lock_guard lock(interruptMutex_);
    guestSocket_ = socket;
    guestPeer_ = peer;
    guestVectors_ = std::move(vectors);
  }
  if (hooks_.connected) hooks_.connected(peer);
}

void IvshmemServer::dropGuest(const std::string& why) {
  {
    std::lock_guard lock(interruptMutex_);
    closeFd(guestSocket_);
    for (int& fd : guestVectors_) closeFd(fd);
    guestVectors_.clear();
  }
  if (hooks_.disconnected) hooks_.disconnected(why);
}

// A peer has nothing to say in this protocol: bytes are a malformed message (reported, dropped),
// end of file is the guest leaving (QEMU exited or unplugged the device).
void IvshmemServer::serveGuestSocket() {
  char bytes[256];
  const ssize_t n = recv(guestSocket_, bytes, sizeof bytes, MSG_DONTWAIT);
  if (n > 0) {
    protocolErrors_.fetch_add(1);
    std::cerr << fmt::format("sable-simd: peer {} sent {} bytes; the ivshmem protocol has no messages from a "
                             "peer: ignored\n",
                             guestPeer_, n);
    return;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  dropGuest(n == 0 ? fmt::format("peer {} closed its connection", guestPeer_)
                   : fmt::format("peer {}'s connection failed: {}", guestPeer_, std::strerror(errno)));
}

void IvshmemServer::run(uint32_t tickMs, const std::function<void()>& tick) {
  while (true) {
    std::vector<pollfd> fds;
    fds.push_back({stopFd_, POLLIN, 0});
    fds.push_back({listenFd_, POLLIN, 0});
    fds.push_back({serverVectors_[0], POLLIN, 0});
    if (guestSocket_ >= 0) fds.push_back({guestSocket_, POLLIN, 0});
    const int ready = poll(fds.data(), fds.size(), static_cast<int>(tickMs));
    if (tick) tick();
    if (ready < 0 && errno != EINTR) {
      std::cerr << fmt::format("sable-simd: poll: {}\n", std::strerror(errno));
      return;
    }
    if (ready <= 0) continue;
    if (fds[0].revents != 0) return;
    if (fds[2].revents & POLLIN) {
      uint64_t count = 0;
      if (read(serverVectors_[0], &count, sizeof count) == sizeof count && hooks_.doorbell) hooks_.doorbell();
    }
    if (fds.size() > 3 && fds[3].revents != 0) serveGuestSocket();
    if (fds[1].revents & POLLIN) accept();
  }
}

}  // namespace sable::server
