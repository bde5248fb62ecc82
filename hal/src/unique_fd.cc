#include "sable/hal/unique_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sable::hal {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Result<UniqueFd> UniqueFd::duplicate(int fd) {
  if (fd < 0) return invalidArgument("file descriptor {} is not valid", fd);
  const int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return invalidArgument("cannot duplicate file descriptor {}: {}", fd, std::strerror(errno));
  return UniqueFd(copy);
}

}  // namespace sable::hal
