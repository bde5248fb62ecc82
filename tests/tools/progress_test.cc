// The progress lines of long runs (tools/sable/progress.h): their formatting, and when a reporter
// draws on a terminal and in a log.
#include "progress.h"

#include <limits>
#include <sstream>

#include <gtest/gtest.h>

namespace sable::tools {
namespace {

TEST(ProgressFormat, DurationsAreMinutesAndSecondsThenHours) {
  EXPECT_EQ(formatDuration(0), "0:00");
  EXPECT_EQ(formatDuration(5.4), "0:05");
  EXPECT_EQ(formatDuration(65), "1:05");
  EXPECT_EQ(formatDuration(59.6), "1:00") << "rounded to the second";
  EXPECT_EQ(formatDuration(3723), "1:02:03");
  EXPECT_EQ(formatDuration(-1), "--:--");
  EXPECT_EQ(formatDuration(std::numeric_limits<double>::infinity()), "--:--");
}

TEST(ProgressFormat, LargeCountsAreAbbreviated) {
  EXPECT_EQ(formatCount(0), "0");
  EXPECT_EQ(formatCount(99'999), "99999");
  EXPECT_EQ(formatCount(125'000), "125k");
  EXPECT_EQ(formatCount(1'250'000), "1.25M");
  EXPECT_EQ(formatCount(999'999), "1M");
  EXPECT_EQ(formatCount(3'400'000'000), "3.4G");
}

TEST(ProgressFormat, RemainingTimeScalesTheElapsedTime) {
  EXPECT_DOUBLE_EQ(estimateRemaining(25, 100, 10), 30);
  EXPECT_DOUBLE_EQ(estimateRemaining(100, 100, 10), 0);
  EXPECT_DOUBLE_EQ(estimateRemaining(120, 100, 10), 0) << "past an estimated total";
  EXPECT_LT(estimateRemaining(0, 100, 10), 0) << "unknown before anything is done";
  EXPECT_LT(estimateRemaining(5, 0, 10), 0) << "unknown without a total";
}

TEST(ProgressFormat, TerminalBarShowsDoneTotalPercentElapsedAndEta) {
  ProgressState s{"conformance", "tests", 250, 1000, 30, "240 passed, 10 failed"};
  EXPECT_EQ(formatProgressBar(s, 20),
            "conformance [#####...............] 250/1000 tests   25%  elapsed 0:30  ETA 1:30  240 passed, 10 failed");
  s.done = 1000;
  s.detail.clear();
  EXPECT_EQ(formatProgressBar(s, 4), "conformance [####] 1000/1000 tests  100%  elapsed 0:30  ETA 0:00");
  s.done = 1500;  // beyond an estimated total
  EXPECT_EQ(formatProgressBar(s, 4), "conformance [####] 1000/1000 tests  100%  elapsed 0:30  ETA 0:00");
}

TEST(ProgressFormat, UnknownTotalShowsNoBarPercentOrEta) {
  const ProgressState s{"RTL", "cycles", 2'500'000, 0, 61, ""};
  EXPECT_EQ(formatProgressBar(s), "RTL 2.5M cycles  elapsed 1:01");
  EXPECT_EQ(formatProgressLine(s), "RTL: 2.5M cycles, elapsed 1:01");
}

TEST(ProgressFormat, LogLineIsPlain) {
  const ProgressState s{"RTL", "cycles", 1'000'000, 4'000'000, 20, "total: the model's estimate"};
  EXPECT_EQ(formatProgressLine(s), "RTL: 1M/4M cycles (25%), elapsed 0:20, ETA 1:00; total: the model's estimate");
}

// A reporter on a fake clock.
struct Fixture {
  double now = 100;
  std::ostringstream out;
  ProgressReporter make(bool terminal) {
    return ProgressReporter("run", "steps", 10, out, terminal, 10, [this] { return now; });
  }
};

TEST(ProgressReporter, LogGetsALineEveryIntervalAndAFinalOneOnlyIfItHadOthers) {
  Fixture f;
  {
    auto p = f.make(false);
    p.update(1);
    f.now += 5;
    p.update(2);
    EXPECT_EQ(f.out.str(), "") << "nothing before the first interval";
    f.now += 5;
    p.update(5);
    EXPECT_EQ(f.out.str(), "run: 5/10 steps (50%), elapsed 0:10, ETA 0:10\n");
    f.now += 1;
    p.update(6);
    EXPECT_EQ(f.out.str(), "run: 5/10 steps (50%), elapsed 0:10, ETA 0:10\n");
    f.now += 9;
    p.update(10);
    p.finish();
  }
  EXPECT_EQ(f.out.str(),
            "run: 5/10 steps (50%), elapsed 0:10, ETA 0:10\n"
            "run: 10/10 steps (100%), elapsed 0:20, ETA 0:00\n"
            "run: 10/10 steps (100%), elapsed 0:20, ETA 0:00\n");

  Fixture quiet;
  {
    auto p = quiet.make(false);
    p.update(10);
  }  // the destructor finishes
  EXPECT_EQ(quiet.out.str(), "") << "a run shorter than the interval leaves a log alone";
}

TEST(ProgressReporter, TerminalRedrawsOneLineInPlaceAndEndsIt) {
  Fixture f;
  {
    auto p = f.make(true);
    f.now += 1;
    p.update(4);
    f.now += 0.01;
    p.update(5);  // too soon to redraw
    p.clearLine();
    f.now += 0.01;
    p.update(6);  // redrawn at once after clearing
  }
  const std::string bar4 = "\r\033[Krun [############..................] 4/10 steps   40%  elapsed 0:01  ETA 0:02";
  const std::string bar6 = "\r\033[Krun [##################............] 6/10 steps   60%  elapsed 0:01  ETA 0:01";
  EXPECT_EQ(f.out.str(), bar4 + "\r\033[K" + bar6 + bar6 + "\n");
}

}  // namespace
}  // namespace sable::tools
