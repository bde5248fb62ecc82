#include "png_write.h"

#include <png.h>

#include <cstring>

namespace sable::tools {

hal::Result<void> writePng(const std::string& path, const runtime::Image& image) {
  if (image.channels != 1 && image.channels != 3)
    return hal::invalidArgument("PNG images are written with 1 or 3 channels, not {}", image.channels);
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  png.width = image.width;
  png.height = image.height;
  png.format = image.channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  if (png_image_write_to_file(&png, path.c_str(), 0, image.pixels.data(), 0, nullptr) == 0) {
    auto error = hal::invalidArgument("cannot write '{}': {}", path, png.message);
    png_image_free(&png);
    return error;
  }
  return {};
}

}  // namespace sable::tools
