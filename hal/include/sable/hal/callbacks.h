// Ready-made callback objects for the asynchronous HAL methods, as a framework or a VTS test
// uses them: each records what it was notified of and how often (the HAL promises exactly once),
// and wait() blocks until the first notification.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sable/hal/interfaces.h"

namespace sable::hal {

class PreparedModelCallback final : public IPreparedModelCallback {
 public:
  void notify(ErrorStatus status, std::shared_ptr<IPreparedModel> preparedModel) override;
  void notify_1_2(ErrorStatus status, std::shared_ptr<IPreparedModel> preparedModel) override;
  void notify_1_3(ErrorStatus status, std::shared_ptr<IPreparedModel> preparedModel) override;
  void diagnostic(const std::string& message) override;

  void wait() const;
  // False when nothing was notified within `timeout`.
  bool waitFor(std::chrono::nanoseconds timeout) const;
  ErrorStatus status() const;
  std::shared_ptr<IPreparedModel> preparedModel() const;
  // How many notifications arrived, and the version of the first (V1_0 for notify).
  int notifications() const;
  HalVersion notifiedVersion() const;
  std::string message() const;  // the diagnostic, if any

 private:
  void record(HalVersion version, ErrorStatus status, std::shared_ptr<IPreparedModel> preparedModel);

  mutable std::mutex mutex_;
  mutable std::condition_variable notified_;
  int count_ = 0;
  HalVersion version_ = HalVersion::V1_0;
  ErrorStatus status_ = ErrorStatus::GENERAL_FAILURE;
  std::shared_ptr<IPreparedModel> preparedModel_;
  std::string message_;
};

class ExecutionCallback final : public IExecutionCallback {
 public:
  void notify(ErrorStatus status) override;
  void notify_1_2(ErrorStatus status, const std::vector<OutputShape>& outputShapes, const Timing& timing) override;
  void notify_1_3(ErrorStatus status, const std::vector<OutputShape>& outputShapes, const Timing& timing) override;
  void diagnostic(const std::string& message) override;

  void wait() const;
  bool waitFor(std::chrono::nanoseconds timeout) const;
  ErrorStatus status() const;
  std::vector<OutputShape> outputShapes() const;
  Timing timing() const;
  int notifications() const;
  HalVersion notifiedVersion() const;
  std::string message() const;

 private:
  void record(HalVersion version, ErrorStatus status, const std::vector<OutputShape>& outputShapes,
              const Timing& timing);

  mutable std::mutex mutex_;
  mutable std::condition_variable notified_;
  int count_ = 0;
  HalVersion version_ = HalVersion::V1_0;
  ErrorStatus status_ = ErrorStatus::GENERAL_FAILURE;
  std::vector<OutputShape> outputShapes_;
  Timing timing_;
  std::string message_;
};

}  // namespace sable::hal
