// The device "auto": a model partitioned over other devices (partition.h), as the NNAPI runtime
// does when the application names no device. Preparation partitions the model and prepares every
// step on its device; an execution runs the steps in order, handing the tensors they exchange
// from one to the next in shared memory. findDevice("auto") gives it over the available devices;
// availableDevices() lists only the real ones.
#pragma once

#include <memory>
#include <vector>

#include "sable/runtime/device.h"
#include "sable/runtime/partition.h"

namespace sable::runtime {

// An `auto` device over `devices` (the CPU device among them, type CPU, is the fallback).
std::shared_ptr<Device> makeAutoDevice(std::vector<std::shared_ptr<Device>> devices);

// The plan of a model prepared by an `auto` device, for reports; nullptr for a model another
// device prepared.
const PartitionPlan* partitionPlanOf(const PreparedModel& prepared);

}  // namespace sable::runtime
