#include "sable/runtime/image_input.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

// stb_image: BMP, PNG and JPEG only (the formats we document), from memory only (we read the file
// ourselves so that errors name it), no HDR/linear-float paths.
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_BMP
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wuseless-cast"
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wcast-qual"
#pragma GCC diagnostic ignored "-Wduplicated-branches"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <stb/stb_image.h>
#pragma GCC diagnostic pop

namespace sable::runtime {
namespace {

// Decoding refuses images above this many pixels before allocating (a hostile header can claim
// 2^31 x 2^31); far above any camera image a classifier is fed.
constexpr uint64_t kMaxImagePixels = uint64_t{1} << 26;

hal::Result<std::vector<uint8_t>> readFile(const std::string& path, std::string_view what) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return hal::invalidArgument("cannot open {} '{}'", what, path);
  const std::streamoff size = file.tellg();
  if (size < 0 || size > (std::streamoff{1} << 30)) return hal::invalidArgument("cannot read {} '{}'", what, path);
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  file.seekg(0);
  if (!file.read(reinterpret_cast<char*>(bytes.data()), size)) return hal::invalidArgument("cannot read {} '{}'", what, path);
  return bytes;
}

}  // namespace

hal::Result<Image> loadImage(const std::string& path, uint32_t channels) {
  if (channels != 1 && channels != 3) return hal::invalidArgument("images are read with 1 or 3 channels, not {}", channels);
  SABLE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, readFile(path, "image"));
  if (bytes.empty() || bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return hal::invalidArgument("image '{}' is empty or too large", path);
  int width = 0, height = 0, fileChannels = 0;
  const int size = static_cast<int>(bytes.size());
  if (stbi_info_from_memory(bytes.data(), size, &width, &height, &fileChannels) == 0)
    return hal::invalidArgument("image '{}' is not a readable BMP, PNG or JPEG file: {}", path, stbi_failure_reason());
  if (width <= 0 || height <= 0 || uint64_t(width) * uint64_t(height) > kMaxImagePixels)
    return hal::invalidArgument("image '{}' has a size of {}x{} pixels (at most {} pixels)", path, width, height,
                                kMaxImagePixels);
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load_from_memory(bytes.data(), size, &width, &height, &fileChannels, static_cast<int>(channels)),
      stbi_image_free);
  if (!pixels) return hal::invalidArgument("image '{}' cannot be decoded: {}", path, stbi_failure_reason());
  Image image;
  image.width = static_cast<uint32_t>(width);
  image.height = static_cast<uint32_t>(height);
  image.channels = channels;
  image.pixels.assign(pixels.get(), pixels.get() + size_t{image.width} * image.height * channels);
  return image;
}

Image resizeBilinear(const Image& image, uint32_t width, uint32_t height) {
  Image out;
  out.width = width;
  out.height = height;
  out.channels = image.channels;
  out.pixels.resize(size_t{width} * height * image.channels);
  if (image.width == 0 || image.height == 0) return out;
  // Source coordinate of a destination pixel centre, clamped to the image: (x + 0.5)·in/out − 0.5.
  auto source = [](uint32_t x, uint32_t in, uint32_t outSize, uint32_t& x0, uint32_t& x1, double& frac) {
    double s = (x + 0.5) * in / outSize - 0.5;
    s = std::clamp(s, 0.0, static_cast<double>(in - 1));
    x0 = static_cast<uint32_t>(s);
    x1 = std::min(x0 + 1, in - 1);
    frac = s - x0;
  };
  const uint32_t c = image.channels;
  for (uint32_t y = 0; y < height; ++y) {
    uint32_t y0, y1;
    double fy;
    source(y, image.height, height, y0, y1, fy);
    for (uint32_t x = 0; x < width; ++x) {
      uint32_t x0, x1;
      double fx;
      source(x, image.width, width, x0, x1, fx);
      for (uint32_t k = 0; k < c; ++k) {
        auto at = [&](uint32_t yy, uint32_t xx) { return double(image.pixels[(size_t{yy} * image.width + xx) * c + k]); };
        const double top = at(y0, x0) + (at(y0, x1) - at(y0, x0)) * fx;
        const double bottom = at(y1, x0) + (at(y1, x1) - at(y1, x0)) * fx;
        const double v = top + (bottom - top) * fy;
        out.pixels[(size_t{y} * width + x) * c + k] = static_cast<uint8_t>(std::clamp(std::lround(v), 0L, 255L));
      }
    }
  }
  return out;
}

hal::Result<std::vector<uint8_t>> imageInput(const std::string& path, const hal::Operand& input) {
  const auto& d = input.dimensions;
  // NHWC when the last extent is 1 or 3, else NCHW when the second is.
  const bool nhwc = d.size() == 4 && (d[3] == 1 || d[3] == 3);
  const bool nchw = !nhwc && d.size() == 4 && (d[1] == 1 || d[1] == 3);
  if (d.size() != 4 || d[0] != 1 || (!nhwc && !nchw) || d[1] == 0 || d[2] == 0 || d[3] == 0)
    return hal::invalidArgument("the model's input has shape [{}], not an image [1, H, W, 1 or 3] or [1, 1 or 3, H, W]",
                                fmt::join(d, ", "));
  const uint32_t channels = nhwc ? d[3] : d[1], height = nhwc ? d[1] : d[2], width = nhwc ? d[2] : d[3];
  const bool isFloat = input.type == hal::OperandType::TENSOR_FLOAT32;
  if (!isFloat && input.type != hal::OperandType::TENSOR_QUANT8_ASYMM &&
      input.type != hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED)
    return hal::invalidArgument("the model's input is {}: images feed uint8, int8 or float32 inputs",
                                hal::toString(input.type));
  SABLE_ASSIGN_OR_RETURN(Image image, loadImage(path, channels));
  Image resized = resizeBilinear(image, width, height);
  if (nchw) {  // planes: all of channel 0, then channel 1, ...
    std::vector<uint8_t> planes(resized.pixels.size());
    const size_t pixels = size_t{width} * height;
    for (size_t i = 0; i < pixels; ++i)
      for (uint32_t c = 0; c < channels; ++c) planes[c * pixels + i] = resized.pixels[i * channels + c];
    resized.pixels = std::move(planes);
  }
  const bool isSigned = input.type == hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  // An 8-bit input whose stored value is the real value (scale 1, zero point 0: how a TFLite
  // uint8/int8 input without quantization imports, e.g. MoveNet's raw image), or without a scale,
  // takes the pixel bytes as they are: uint8 p, int8 p − 128.
  if (!isFloat && (!(input.scale > 0.0f) || (input.scale == 1.0f && input.zeroPoint == 0))) {
    if (isSigned)
      for (uint8_t& p : resized.pixels) p = static_cast<uint8_t>(p - 128);
    return std::move(resized.pixels);
  }
  const int lo = isSigned ? -128 : 0, hi = isSigned ? 127 : 255;
  std::vector<uint8_t> bytes;
  bytes.reserve(resized.pixels.size() * (isFloat ? 4 : 1));
  for (uint8_t p : resized.pixels) {
    // MobileNet's preprocessing: real = (p − 128) / 128, in [−1, 1).
    const double real = (static_cast<double>(p) - 128.0) / 128.0;
    if (isFloat) {
      const auto f = static_cast<float>(real);
      const auto* raw = reinterpret_cast<const uint8_t*>(&f);
      bytes.insert(bytes.end(), raw, raw + 4);
      continue;
    }
    const long q = std::lround(real / static_cast<double>(input.scale)) + input.zeroPoint;
    bytes.push_back(static_cast<uint8_t>(static_cast<int8_t>(std::clamp<long>(q, lo, hi)) & 0xff));
  }
  return bytes;
}

hal::Result<std::vector<std::string>> loadLabels(const std::string& path) {
  SABLE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, readFile(path, "labels file"));
  std::vector<std::string> labels;
  std::string line;
  for (uint8_t b : bytes) {
    if (b == '\n') {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      labels.push_back(std::move(line));
      line.clear();
    } else {
      line.push_back(static_cast<char>(b));
    }
  }
  if (!line.empty()) labels.push_back(std::move(line));  // a last line without a newline
  if (labels.empty()) return hal::invalidArgument("labels file '{}' is empty", path);
  return labels;
}

hal::Result<std::vector<ClassScore>> topK(const hal::Operand& output, const std::vector<uint8_t>& bytes, size_t k) {
  size_t n = 1;
  for (uint32_t dim : output.dimensions) n *= dim;
  const auto elementBytes = hal::sizeOfData(output.type, {1});
  if (!elementBytes || bytes.size() != n * *elementBytes)
    return hal::invalidArgument("the output holds {} bytes for {} elements of {}", bytes.size(), n,
                                hal::toString(output.type));
  std::vector<ClassScore> scores(n);
  for (size_t i = 0; i < n; ++i) {
    ClassScore& s = scores[i];
    s.index = static_cast<uint32_t>(i);
    switch (output.type) {
      case hal::OperandType::TENSOR_QUANT8_ASYMM: s.stored = bytes[i]; break;
      case hal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED: s.stored = static_cast<int8_t>(bytes[i]); break;
      case hal::OperandType::TENSOR_FLOAT32: {
        float f;
        std::memcpy(&f, bytes.data() + i * 4, 4);
        s.score = f;
        break;
      }
      default: return hal::invalidArgument("classifier outputs of type {} are not read", hal::toString(output.type));
    }
    if (output.type != hal::OperandType::TENSOR_FLOAT32)
      s.score = static_cast<double>(output.scale) * static_cast<double>(s.stored - output.zeroPoint);
  }
  k = std::min(k, n);
  std::partial_sort(scores.begin(), scores.begin() + static_cast<std::ptrdiff_t>(k), scores.end(),
                    [](const ClassScore& a, const ClassScore& b) {
                      return a.score != b.score ? a.score > b.score : a.index < b.index;
                    });
  scores.resize(k);
  return scores;
}

}  // namespace sable::runtime
