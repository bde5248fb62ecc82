// The shared-memory objects of one device: the lock file that makes the server unique, the
// control segment (client slots) and the device-memory segment. RAII: the destructor unmaps and
// unlinks everything, so a cleanly stopped server leaves nothing in /dev/shm.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>

#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>

namespace sable::server {

// A value or the message of why there is none (errors are values; the server is a process of
// its own and reports on stderr).
template <typename T>
class Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  static Expected failure(std::string message) { return Expected(Failure{std::move(message)}); }
  bool ok() const { return state_.index() == 0; }
  T& value() { return std::get<0>(state_); }
  const std::string& error() const { return std::get<1>(state_).message; }

 private:
  struct Failure {
    std::string message;
  };
  explicit Expected(Failure failure) : state_(std::move(failure)) {}
  std::variant<T, Failure> state_;
};

class SharedDevice {
 public:
  // Takes the device's lock (refusing when another live server holds it), removes stale
  // segments of a crashed server, checks /dev/shm's free space and creates both segments.
  static Expected<std::unique_ptr<SharedDevice>> create(const std::string& name,
                                                        uint64_t controlBytes,
                                                        uint64_t memoryBytes);
  ~SharedDevice();
  SharedDevice(const SharedDevice&) = delete;
  SharedDevice& operator=(const SharedDevice&) = delete;

  void* control() const { return control_.get_address(); }
  uint8_t* memory() const { return static_cast<uint8_t*>(memory_.get_address()); }
  uint64_t memoryBytes() const { return memory_.get_size(); }

 private:
  SharedDevice(std::string name, int lockFd) : name_(std::move(name)), lockFd_(lockFd) {}

  std::string name_;
  int lockFd_ = -1;
  bool ownsSegments_ = false;
  boost::interprocess::mapped_region control_;
  boost::interprocess::mapped_region memory_;
};

}  // namespace sable::server
