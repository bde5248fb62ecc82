// Images and labels for classification models (`sable run MODEL --image FILE --labels FILE`,
// docs/tflite.md): an image file becomes the bytes of a model's NHWC image input, and the
// classifier's output becomes the top-k classes with their label text and dequantized scores.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/types.h"

namespace sable::runtime {

// Decoded pixels, 8 bits per channel, interleaved, rows top to bottom.
struct Image {
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t channels = 0;
  std::vector<uint8_t> pixels;  // height * width * channels
};

// Reads a BMP, PNG or JPEG file (stb_image) with `channels` channels (1 or 3: gray or RGB).
// A missing, truncated or undecodable file is an INVALID_ARGUMENT error naming it and the reason.
hal::Result<Image> loadImage(const std::string& path, uint32_t channels);

// Bilinear resize with half-pixel centres (the sampling of tf.image.resize), rounding to nearest.
Image resizeBilinear(const Image& image, uint32_t width, uint32_t height);

// The bytes of `input` ([1, H, W, C] with C 1 or 3, or NCHW [1, C, H, W] when the last extent is
// not 1 or 3; TENSOR_QUANT8_ASYMM, _SIGNED or TENSOR_FLOAT32) for the image in `path`: decoded,
// resized to W×H, and each pixel p mapped to the real value (p − 128) / 128 — MobileNet's [−1, 1)
// input range — then quantized with the input's scale and zero point (round to nearest,
// saturated). For the common uint8 input with scale 1/128 and zero point 128 this is exactly the
// pixel byte. An 8-bit input with scale 1 and zero point 0 (a TFLite input without quantization
// imports so) or without a scale takes p itself (uint8) or p − 128 (int8); a float32 input takes
// the real value (docs/tflite.md).
hal::Result<std::vector<uint8_t>> imageInput(const std::string& path, const hal::Operand& input);

// One label per line (trailing CR removed); an error when the file cannot be read or is empty.
hal::Result<std::vector<std::string>> loadLabels(const std::string& path);

struct ClassScore {
  uint32_t index = 0;
  double score = 0.0;  // dequantized
  int64_t stored = 0;  // the value in the output tensor
};
// The k highest-scoring classes of a classifier output ([1, N] or [N]; quantized or float),
// highest first, ties to the lower index.
hal::Result<std::vector<ClassScore>> topK(const hal::Operand& output, const std::vector<uint8_t>& bytes, size_t k);

}  // namespace sable::runtime
