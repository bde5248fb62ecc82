// A HAL driver as a framework device: runtime::Device over an NN HAL IDevice, through its 1.3
// methods — prepareModel_1_3 with its callback, then one of its execution paths — as the Android
// framework uses a driver service. Errors keep the driver's diagnostic message when it gives one.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "sable/hal/interfaces.h"
#include "sable/runtime/device.h"

namespace sable::runtime {

// Which of the HAL's execution paths a client device uses, as VTS runs each generated test on
// every path: executeSynchronously_1_3, execute_1_3 + callback, executeFenced + fence wait, or
// a burst (one BurstController per prepared model).
enum class HalExecutionPath { SYNC, ASYNC, FENCED, BURST };
std::optional<HalExecutionPath> halExecutionPathFromString(std::string_view name);  // "sync", ...

// `version`: the HAL version the client speaks, as the framework speaks a driver's newest
// interface. Before 1.3 it uses that version's methods only: capabilities converted up, the
// operations the version cannot express unsupported (the driver is asked about the slice it can,
// hal::compliantOperations), models converted down; deadlines and priorities are not sent, 1.0
// and 1.1 execute through `execute` whatever the path, 1.2's fenced path is execute_1_2 (fences came
// with 1.3), and caching needs 1.2.
std::shared_ptr<Device> makeHalClientDevice(std::string name, std::shared_ptr<hal::IDevice> device,
                                            HalExecutionPath path = HalExecutionPath::SYNC,
                                            hal::HalVersion version = hal::HalVersion::V1_3);

// The HAL objects behind a device made by makeHalClientDevice and behind a model it prepared, or
// null for any other device or prepared model: for a client that uses the HAL's other paths itself
// (the NNAPI C API's fenced executions, bursts and driver-managed memories, docs/nnapi.md).
std::shared_ptr<hal::IDevice> halDeviceOf(const Device& device);
std::shared_ptr<hal::IPreparedModel> halPreparedModelOf(const PreparedModel& prepared);

}  // namespace sable::runtime
