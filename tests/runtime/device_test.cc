#include <gtest/gtest.h>

#include "sable/runtime/device.h"

namespace sable::runtime {
namespace {

TEST(Devices, CpuReferenceIsAvailable) {
  auto device = findDevice("cpu-reference");
  ASSERT_TRUE(device.ok()) << device.error().message;
  EXPECT_EQ((*device)->type(), hal::DeviceType::CPU);
  EXPECT_FALSE((*device)->versionString().empty());
}

TEST(Devices, UnknownDeviceNamesTheAvailableOnes) {
  auto device = findDevice("no-such-device");
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.error().status, hal::ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(device.error().message.find("cpu-reference"), std::string::npos);
}

}  // namespace
}  // namespace sable::runtime
