// SABLE_VLOG: tags parsed as the environment variable gives them, lines written only for enabled
// tags, and a disabled tag's message never evaluated.
#include <gtest/gtest.h>

#include "sable/hal/vlog.h"

namespace sable::hal {
namespace {

uint32_t bit(VlogTag tag) { return 1u << static_cast<uint32_t>(tag); }

TEST(Vlog, TagsAreParsedLikeTheNnapiProperty) {
  std::vector<std::string> unknown;
  EXPECT_EQ(parseVlogTags("compilation,driver", &unknown), bit(VlogTag::Compilation) | bit(VlogTag::Driver));
  EXPECT_EQ(parseVlogTags("model execution", &unknown), bit(VlogTag::Model) | bit(VlogTag::Execution));
  EXPECT_EQ(parseVlogTags("cpuexe:manager", &unknown), bit(VlogTag::CpuExe) | bit(VlogTag::Manager));
  EXPECT_TRUE(unknown.empty());
  EXPECT_EQ(parseVlogTags("all", &unknown), (1u << kVlogTagCount) - 1u);
  EXPECT_EQ(parseVlogTags("1", &unknown), (1u << kVlogTagCount) - 1u);
  EXPECT_EQ(parseVlogTags("", &unknown), 0u);
  EXPECT_EQ(parseVlogTags(",,driver,,", &unknown), bit(VlogTag::Driver));
  EXPECT_EQ(parseVlogTags("drivers,Driver,driver", &unknown), bit(VlogTag::Driver));
  EXPECT_EQ(unknown, (std::vector<std::string>{"drivers", "Driver"})) << "tags are exact, lower case";
}

TEST(Vlog, OnlyEnabledTagsWriteAndADisabledMessageIsNotEvaluated) {
  int evaluated = 0;
  auto expensive = [&] {
    ++evaluated;
    return 42;
  };
  setVlogTags(bit(VlogTag::Driver));
  testing::internal::CaptureStderr();
  SABLE_VLOG(Driver) << "prepared " << expensive() << " things";
  SABLE_VLOG(Compilation) << "never " << expensive();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "sable[driver] prepared 42 things\n");
  EXPECT_EQ(evaluated, 1);
  EXPECT_TRUE(vlogOn(VlogTag::Driver));
  EXPECT_FALSE(vlogOn(VlogTag::Model));

  setVlogTags(0);
  testing::internal::CaptureStderr();
  SABLE_VLOG(Driver) << expensive();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(evaluated, 1);
}

TEST(Vlog, EveryTagHasTheNnapiName) {
  EXPECT_EQ(vlogTagName(VlogTag::Compilation), "compilation");
  EXPECT_EQ(vlogTagName(VlogTag::CpuExe), "cpuexe");
  EXPECT_EQ(vlogTagName(VlogTag::Driver), "driver");
  EXPECT_EQ(vlogTagName(VlogTag::Execution), "execution");
  EXPECT_EQ(vlogTagName(VlogTag::Manager), "manager");
  EXPECT_EQ(vlogTagName(VlogTag::Model), "model");
}

}  // namespace
}  // namespace sable::hal
