// Built-in models: the real MobileNet v1 and v2 (224x224, 1001 classes) topologies, quantized
// (TENSOR_QUANT8_ASYMM activations and weights, TENSOR_INT32 biases), with deterministic
// synthetic weights and quantization parameters. They exercise exactly the layers a real
// quantized MobileNet has, without shipping trained weights.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/types.h"

namespace sable::runtime {

// Names accepted by makeBuiltinModel ("mobilenet_v1", "mobilenet_v2", "tiny_cnn": a 32x32 network
// of conv, depthwise, add, max and average pool, 1x1 conv and reshape to 10 logits, without
// SOFTMAX, so that the NPU runs it whole; "conv_bench": the layer shapes of the NPU's
// performance targets, 3x3 and 1x1 convolutions with 64 and 128 channels and a 3x3 depthwise).
const std::vector<std::string>& builtinModelNames();

// The model; the same name always gives the same model (weights come from a fixed seed).
hal::Result<hal::Model> makeBuiltinModel(std::string_view name);

// Deterministic input bytes for the model's first input (uniform over the quantized range).
std::vector<uint8_t> makeSyntheticInput(const hal::Model& model, uint64_t seed);

// A small deterministic pseudo-random generator (splitmix64), identical on every platform,
// unlike std::uniform_int_distribution.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform integer in [lo, hi].
  int32_t uniform(int32_t lo, int32_t hi) {
    return lo + static_cast<int32_t>(next() % static_cast<uint64_t>(static_cast<int64_t>(hi) - lo + 1));
  }

 private:
  uint64_t state_;
};

}  // namespace sable::runtime
