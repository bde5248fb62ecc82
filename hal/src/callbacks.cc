#include "sable/hal/callbacks.h"

namespace sable::hal {

void PreparedModelCallback::record(HalVersion version, ErrorStatus status,
                                   std::shared_ptr<IPreparedModel> preparedModel) {
  std::lock_guard lock(mutex_);
  // Later notifications are counted (a test asserts there are none) but change nothing.
  if (count_++ == 0) {
    version_ = version;
    status_ = status;
    preparedModel_ = std::move(preparedModel);
  }
  notified_.notify_all();
}

void PreparedModelCallback::notify(ErrorStatus status, std::shared_ptr<IPreparedModel> preparedModel) {
  record(HalVersion::V1_0, status, std::move(preparedModel));
}
void PreparedModelCallback::notify_1_2(ErrorStatus status, std::shared_ptr<IPreparedModel> preparedModel) {
  record(HalVersion::V1_2, status, std::move(preparedModel));
}
void PreparedModelCallback::notify_1_3(ErrorStatus status, std::shared_ptr<IPreparedModel> preparedModel) {
  record(HalVersion::V1_3, status, std::move(preparedModel));
}

void PreparedModelCallback::diagnostic(const std::string& message) {
  std::lock_guard lock(mutex_);
  if (count_ == 0) message_ = message;
}
std::string PreparedModelCallback::message() const {
  std::lock_guard lock(mutex_);
  return message_;
}

void PreparedModelCallback::wait() const {
  std::unique_lock lock(mutex_);
  notified_.wait(lock, [&] { return count_ > 0; });
}
bool PreparedModelCallback::waitFor(std::chrono::nanoseconds timeout) const {
  std::unique_lock lock(mutex_);
  return notified_.wait_for(lock, timeout, [&] { return count_ > 0; });
}
ErrorStatus PreparedModelCallback::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}
std::shared_ptr<IPreparedModel> PreparedModelCallback::preparedModel() const {
  std::lock_guard lock(mutex_);
  return preparedModel_;
}
int PreparedModelCallback::notifications() const {
  std::lock_guard lock(mutex_);
  return count_;
}
HalVersion PreparedModelCallback::notifiedVersion() const {
  std::lock_guard lock(mutex_);
  return version_;
}

void ExecutionCallback::record(HalVersion version, ErrorStatus status, const std::vector<OutputShape>& outputShapes,
                               const Timing& timing) {
  std::lock_guard lock(mutex_);
  if (count_++ == 0) {
    version_ = version;
    status_ = status;
    outputShapes_ = outputShapes;
    timing_ = timing;
  }
  notified_.notify_all();
}

void ExecutionCallback::notify(ErrorStatus status) { record(HalVersion::V1_0, status, {}, {}); }
void ExecutionCallback::notify_1_2(ErrorStatus status, const std::vector<OutputShape>& outputShapes,
                                   const Timing& timing) {
  record(HalVersion::V1_2, status, outputShapes, timing);
}
void ExecutionCallback::notify_1_3(ErrorStatus status, const std::vector<OutputShape>& outputShapes,
                                   const Timing& timing) {
  record(HalVersion::V1_3, status, outputShapes, timing);
}

void ExecutionCallback::diagnostic(const std::string& message) {
  std::lock_guard lock(mutex_);
  if (count_ == 0) message_ = message;
}
std::string ExecutionCallback::message() const {
  std::lock_guard lock(mutex_);
  return message_;
}

void ExecutionCallback::wait() const {
  std::unique_lock lock(mutex_);
  notified_.wait(lock, [&] { return count_ > 0; });
}
bool ExecutionCallback::waitFor(std::chrono::nanoseconds timeout) const {
  std::unique_lock lock(mutex_);
  return notified_.wait_for(lock, timeout, [&] { return count_ > 0; });
}
ErrorStatus ExecutionCallback::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}
std::vector<OutputShape> ExecutionCallback::outputShapes() const {
  std::lock_guard lock(mutex_);
  return outputShapes_;
}
Timing ExecutionCallback::timing() const {
  std::lock_guard lock(mutex_);
  return timing_;
}
int ExecutionCallback::notifications() const {
  std::lock_guard lock(mutex_);
  return count_;
}
HalVersion ExecutionCallback::notifiedVersion() const {
  std::lock_guard lock(mutex_);
  return version_;
}

}  // namespace sable::hal
