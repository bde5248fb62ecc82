// Writes an 8-bit gray or RGB image as a PNG with libpng (`sable run --annotate`).
#pragma once

#include <string>

#include "sable/hal/result.h"
#include "sable/runtime/image_input.h"

namespace sable::tools {

// An unwritable path is an INVALID_ARGUMENT error naming it and libpng's reason.
hal::Result<void> writePng(const std::string& path, const runtime::Image& image);

}  // namespace sable::tools
