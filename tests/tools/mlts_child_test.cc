// sable mlts's child processes (tools/sable/mlts_child.h): how a child that ends, fails, hangs or
// is killed is classified, and that finish()'s time limit counts from the call.
#include "mlts_child.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

namespace sable::tools::mlts {
namespace {

using std::chrono::milliseconds;

ChildBody sleepingBody(milliseconds sleep, std::string payload) {
  return [sleep, payload](const auto& progress) -> hal::Result<std::string> {
    progress("started");
    std::this_thread::sleep_for(sleep);
    return payload;
  };
}

TEST(MltsChild, AResultIsASuccessWithItsPayload) {
  ChildOutcome outcome = runInChild(sleepingBody(milliseconds(0), "forty-two"), milliseconds(10000));
  EXPECT_EQ(outcome.outcome, CaseClass::SUCCESS) << outcome.detail;
  EXPECT_EQ(outcome.payload, "forty-two");
}

TEST(MltsChild, AnErrorIsAFailureWithItsMessage) {
  ChildOutcome outcome =
      runInChild([](const auto&) -> hal::Result<std::string> { return hal::generalFailure("no luck"); },
                 milliseconds(10000));
  EXPECT_EQ(outcome.outcome, CaseClass::FAILURE);
  EXPECT_NE(outcome.detail.find("no luck"), std::string::npos) << outcome.detail;
}

TEST(MltsChild, AChildPastItsLimitIsAHang) {
  ChildOutcome outcome = runInChild(sleepingBody(milliseconds(5000), "late"), milliseconds(300));
  EXPECT_EQ(outcome.outcome, CaseClass::HANG) << outcome.detail;
  EXPECT_LT(outcome.milliseconds, 4000);
}

// The suite's killed client: finish() comes long after the child started (a large model prepares
// and runs for seconds before the kill); its few seconds of grace count from the call, not from
// the child's start.
TEST(MltsChild, FinishCountsItsLimitFromTheCall) {
  auto child = ChildProcess::start(sleepingBody(milliseconds(1500), "done"));
  ASSERT_TRUE(child.ok()) << child.error().message;
  ASSERT_EQ(child->waitForProgress(milliseconds(10000)), "started");
  std::this_thread::sleep_for(milliseconds(1000));
  // The limit (900 ms) is shorter than the child's life so far; the child ends 500 ms into it.
  ChildOutcome outcome = child->finish(milliseconds(900));
  EXPECT_EQ(outcome.outcome, CaseClass::SUCCESS) << outcome.detail;
  EXPECT_EQ(outcome.payload, "done");
}

TEST(MltsChild, AKillLongAfterTheStartIsTheIntendedEnd) {
  auto child = ChildProcess::start([](const auto& progress) -> hal::Result<std::string> {
    progress("started");
    for (;;) pause();
  });
  ASSERT_TRUE(child.ok()) << child.error().message;
  ASSERT_EQ(child->waitForProgress(milliseconds(10000)), "started");
  std::this_thread::sleep_for(milliseconds(1200));
  child->kill();
  ChildOutcome outcome = child->finish(milliseconds(1000));
  EXPECT_EQ(outcome.outcome, CaseClass::SUCCESS) << outcome.detail;
  EXPECT_EQ(outcome.detail, "killed as intended");
}

}  // namespace
}  // namespace sable::tools::mlts
