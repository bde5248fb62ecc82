// TensorFlow Lite import: a .tflite file (FlatBuffers, schema version 3) → an NN HAL 1.3 model,
// operators mapped to NNAPI operations the way the TFLite NNAPI delegate maps them (docs/tflite.md).
// The container is verified before anything in it is read, then every index, shape, buffer and
// quantization array is checked; anything the importer cannot express exactly (an unsupported
// operator or operator version, sparse or variable tensors, a custom quantization) is an
// INVALID_ARGUMENT error naming it and where it is, never a crash.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "sable/hal/result.h"
#include "sable/hal/types.h"

namespace sable::runtime {

// Files larger than this are refused before being read (FlatBuffers' own limit is 2 GiB).
inline constexpr size_t kMaxTfliteFileBytes = size_t{1} << 30;

// The model in `bytes` (the whole file). The result is a validated hal::Model (hal::validateModel).
hal::Result<hal::Model> importTflite(std::span<const uint8_t> bytes);

// The model in the file at `path`.
hal::Result<hal::Model> importTfliteFile(const std::string& path);

}  // namespace sable::runtime
