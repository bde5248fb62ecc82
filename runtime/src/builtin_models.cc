#include "sable/runtime/builtin_models.h"

#include <cmath>

#include "sable/runtime/model_builder.h"

namespace sable::runtime {
namespace {

using hal::OperandType;
using hal::OperationType;

constexpr OperandType kQuant8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr uint64_t kWeightSeed = 0x5ab1e0001ull;
constexpr int32_t kFuseNone = 0;
constexpr int32_t kFuseRelu6 = 3;
constexpr int32_t kPaddingSame = 1;
constexpr int32_t kPaddingValid = 2;
constexpr uint32_t kClasses = 1001;

// A quantized activation tensor: operand index, shape (NHWC), quantization, and the expected
// root mean square of its real values, which sizes the weights of the layer that reads it.
struct Activation {
  uint32_t operand;
  std::vector<uint32_t> shape;
  float scale;
  int32_t zeroPoint;
  float rms;
};

// Builds a quantized network layer by layer. Weights are uniform around the zero point 128
// (±64 quantized steps); their scale is chosen so that each layer's output has a standard
// deviation of about `kTargetStd` real units, which keeps the synthetic network numerically
// alive through 50+ layers the way trained weights do.
class NetworkBuilder {
 public:
  static constexpr float kTargetStd = 1.5f;
  static constexpr float kRelu6Scale = 6.0f / 255.0f;  // ReLU6 outputs span [0, 6]
  static constexpr float kLinearScale = 12.0f / 255.0f;  // linear outputs span about ±6
  static constexpr int32_t kLinearZeroPoint = 128;
  static constexpr float kUniformRms = 0.57735f;  // uniform on [-1, 1]
  static constexpr float kPooledRmsRatio = 0.4f * 1.41421f;

  NetworkBuilder() : random_(kWeightSeed) {}

  Activation input(uint32_t size) {
    // Image input as MobileNets take it: [-1, 1] in 128 steps per unit.
    Activation a{0, {1, size, size, 3}, 1.0f / 128.0f, 128, kUniformRms};
    a.operand = builder_.addInput(kQuant8, a.shape, a.scale, a.zeroPoint);
    return a;
  }

  // Full convolution (kernel k, stride s, SAME padding), ReLU6 or linear output.
  Activation conv(const Activation& in, uint32_t outChannels, uint32_t k, uint32_t stride, bool relu6) {
    const uint32_t inChannels = in.shape[3];
    const uint32_t fanIn = k * k * inChannels;
    const float weightScale = weightScaleFor(in, fanIn);
    uint32_t filter = weights({outChannels, k, k, inChannels}, weightScale);
    uint32_t bias = biases(outChannels, in.scale * weightScale);
    Activation out = output(in, outChannels, stride, relu6);
    builder_.addOperation(OperationType::CONV_2D,
                          {in.operand, filter, bias, builder_.addInt32(kPaddingSame), builder_.addInt32(int32_t(stride)),
                           builder_.addInt32(int32_t(stride)), builder_.addInt32(relu6 ? kFuseRelu6 : kFuseNone)},
                          {out.operand});
    return out;
  }

  // Depthwise 3x3 convolution with depth multiplier 1, ReLU6.
  Activation depthwise(const Activation& in, uint32_t stride) {
    const uint32_t channels = in.shape[3];
    const float weightScale = weightScaleFor(in, 9);
    uint32_t filter = weights({1, 3, 3, channels}, weightScale);
    uint32_t bias = biases(channels, in.scale * weightScale);
    Activation out = output(in, channels, stride, true);
    builder_.addOperation(OperationType::DEPTHWISE_CONV_2D,
                          {in.operand, filter, bias, builder_.addInt32(kPaddingSame), builder_.addInt32(int32_t(stride)),
                           builder_.addInt32(int32_t(stride)), builder_.addInt32(1), builder_.addInt32(kFuseRelu6)},
                          {out.operand});
    return out;
  }

  Activation add(const Activation& a, const Activation& b) {
    Activation out{0, a.shape, kLinearScale * 1.5f, kLinearZeroPoint, std::sqrt(a.rms * a.rms + b.rms * b.rms)};
    out.operand = builder_.addTemporary(kQuant8, out.shape, out.scale, out.zeroPoint);
    builder_.addOperation(OperationType::ADD, {a.operand, b.operand, builder_.addInt32(kFuseNone)}, {out.operand});
    return out;
  }

  // Global average pool over the whole spatial extent (VALID padding, filter = input size).
  Activation globalAveragePool(const Activation& in) {
    // Averaging keeps the mean of a ReLU output (0.4 of the pre-activation std for a normal
    // distribution) and smooths away the rest.
    Activation out{0, {1, 1, 1, in.shape[3]}, in.scale, in.zeroPoint, in.rms * kPooledRmsRatio};
    out.operand = builder_.addTemporary(kQuant8, out.shape, out.scale, out.zeroPoint);
    builder_.addOperation(OperationType::AVERAGE_POOL_2D,
                          {in.operand, builder_.addInt32(kPaddingValid), builder_.addInt32(1), builder_.addInt32(1),
                           builder_.addInt32(int32_t(in.shape[2])), builder_.addInt32(int32_t(in.shape[1])),
                           builder_.addInt32(kFuseNone)},
                          {out.operand});
    return out;
  }

  // Max pool 2x2, stride 2 (VALID padding); the output keeps the input's quantization.
  Activation maxPool2x2(const Activation& in) {
    Activation out{0, {1, in.shape[1] / 2, in.shape[2] / 2, in.shape[3]}, in.scale, in.zeroPoint, in.rms};
    out.operand = builder_.addTemporary(kQuant8, out.shape, out.scale, out.zeroPoint);
    builder_.addOperation(OperationType::MAX_POOL_2D,
                          {in.operand, builder_.addInt32(kPaddingValid), builder_.addInt32(2), builder_.addInt32(2),
                           builder_.addInt32(2), builder_.addInt32(2), builder_.addInt32(kFuseNone)},
                          {out.operand});
    return out;
  }

  // The classifier head: 1x1 convolution to the logits, reshape to [1, classes], then softmax
  // (MobileNets) or the logits themselves as the model output (tiny_cnn).
  void classifier(const Activation& pooled, uint32_t classes, bool softmax) {
    Activation logits = conv(pooled, classes, 1, 1, false);
    uint32_t shape = builder_.addConstant<int32_t>(OperandType::TENSOR_INT32, {2}, {1, int32_t(classes)});
    if (!softmax) {
      uint32_t flat = builder_.addOutput(kQuant8, {1, classes}, logits.scale, logits.zeroPoint);
      builder_.addOperation(OperationType::RESHAPE, {logits.operand, shape}, {flat});
      return;
    }
    uint32_t flat = builder_.addTemporary(kQuant8, {1, classes}, logits.scale, logits.zeroPoint);
    builder_.addOperation(OperationType::RESHAPE, {logits.operand, shape}, {flat});
    // Softmax output quantization of the TFLite/NNAPI convention: scale 1/256, zero point 0.
    uint32_t probabilities = builder_.addOutput(kQuant8, {1, classes}, 1.0f / 256.0f, 0);
    builder_.addOperation(OperationType::SOFTMAX, {flat, builder_.addFloat32(1.0f)}, {probabilities});
  }

  hal::Result<hal::Model> finish() { return builder_.finish(); }

 private:
  float weightScaleFor(const Activation& in, uint32_t fanIn) {
    constexpr float kWeightStdSteps = 64.0f / 1.7320508f;  // std of uniform ±64 steps
    const float weightStd = kTargetStd / (std::sqrt(float(fanIn)) * in.rms);
    return weightStd / kWeightStdSteps;
  }

  uint32_t weights(std::vector<uint32_t> shape, float scale) {
    size_t count = 1;
    for (uint32_t d : shape) count *= d;
    std::vector<uint8_t> values(count);
    for (auto& v : values) v = static_cast<uint8_t>(random_.uniform(64, 192));
    return builder_.addConstant(kQuant8, std::move(shape), values, scale, 128);
  }

  uint32_t biases(uint32_t count, float scale) {
    // Small biases (about ±0.1 real) so that ReLU6 layers are not all saturated or all zero.
    const int32_t range = std::max(1, static_cast<int32_t>(0.1f / scale));
    std::vector<int32_t> values(count);
    for (auto& v : values) v = random_.uniform(-range, range);
    return builder_.addConstant(OperandType::TENSOR_INT32, {count}, values, scale, 0);
  }

  Activation output(const Activation& in, uint32_t channels, uint32_t stride, bool relu6) {
    const uint32_t h = (in.shape[1] + stride - 1) / stride;
    const uint32_t w = (in.shape[2] + stride - 1) / stride;
    // A ReLU keeps half of a zero-mean normal pre-activation: rms = std / sqrt(2).
    Activation out{0, {1, h, w, channels}, relu6 ? kRelu6Scale : kLinearScale, relu6 ? 0 : kLinearZeroPoint,
                   relu6 ? kTargetStd / std::sqrt(2.0f) : kTargetStd};
    out.operand = builder_.addTemporary(kQuant8, out.shape, out.scale, out.zeroPoint);
    return out;
  }

  ModelBuilder builder_;
  SplitMix64 random_;
};

hal::Result<hal::Model> mobileNetV1() {
  NetworkBuilder net;
  Activation x = net.conv(net.input(224), 32, 3, 2, true);
  // (pointwise channels, depthwise stride) of the 13 depthwise-separable blocks.
  const std::pair<uint32_t, uint32_t> blocks[] = {{64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},
                                                  {512, 2}, {512, 1}, {512, 1}, {512, 1}, {512, 1},
                                                  {512, 1}, {1024, 2}, {1024, 1}};
  for (auto [channels, stride] : blocks) {
    x = net.depthwise(x, stride);
    x = net.conv(x, channels, 1, 1, true);
  }
  net.classifier(net.globalAveragePool(x), kClasses, true);
  return net.finish();
}

hal::Result<hal::Model> mobileNetV2() {
  NetworkBuilder net;
  Activation x = net.conv(net.input(224), 32, 3, 2, true);
  // Inverted residual stages: expansion t, output channels c, repeats n, first stride s.
  struct Stage {
    uint32_t t, c, n, s;
  };
  const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2},  {6, 64, 4, 2},
                          {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  for (const Stage& stage : stages) {
    for (uint32_t i = 0; i < stage.n; ++i) {
      const uint32_t stride = i == 0 ? stage.s : 1;
      Activation block = x;
      if (stage.t != 1) block = net.conv(block, x.shape[3] * stage.t, 1, 1, true);  // expand
      block = net.depthwise(block, stride);
      block = net.conv(block, stage.c, 1, 1, false);  // linear bottleneck
      x = (stride == 1 && x.shape[3] == stage.c) ? net.add(x, block) : block;
    }
  }
  x = net.conv(x, 1280, 1, 1, true);
  net.classifier(net.globalAveragePool(x), kClasses, true);
  return net.finish();
}

// A small network of the layer types MobileNets are made of, without SOFTMAX: every operation
// is one the NPU compiler lowers, so the whole network runs on sable-npu (tests, demos).
hal::Result<hal::Model> tinyCnn() {
  NetworkBuilder net;
  Activation x = net.conv(net.input(32), 16, 3, 2, true);  // 16x16x16
  Activation block = net.depthwise(x, 1);
  block = net.conv(block, 16, 1, 1, false);
  x = net.add(x, block);
  x = net.depthwise(x, 2);  // 8x8
  x = net.conv(x, 32, 1, 1, true);
  x = net.maxPool2x2(x);  // 4x4
  net.classifier(net.globalAveragePool(x), 10, false);
  return net.finish();
}

// The layer shapes the NPU's performance targets name (docs/rtl.md): 3×3 and 1×1 convolutions
// with at least 64 input and output channels, and 3×3 depthwise, at 28×28 and 14×14.
hal::Result<hal::Model> convBench() {
  NetworkBuilder net;
  Activation x = net.conv(net.input(28), 64, 3, 1, true);  // 28x28x64 (3 input channels)
  x = net.conv(x, 64, 3, 1, true);                         // 3x3, 64 -> 64
  x = net.conv(x, 64, 1, 1, true);                         // 1x1, 64 -> 64
  x = net.depthwise(x, 1);                                 // 3x3 depthwise, stride 1
  x = net.conv(x, 128, 3, 2, true);                        // 14x14x128
  x = net.conv(x, 128, 3, 1, true);                        // 3x3, 128 -> 128
  x = net.conv(x, 128, 1, 1, true);                        // 1x1, 128 -> 128
  net.classifier(net.globalAveragePool(x), 10, false);
  return net.finish();
}

}  // namespace

const std::vector<std::string>& builtinModelNames() {
  static const std::vector<std::string> names = {"mobilenet_v1", "mobilenet_v2", "tiny_cnn", "conv_bench"};
  return names;
}

hal::Result<hal::Model> makeBuiltinModel(std::string_view name) {
  if (name == "mobilenet_v1") return mobileNetV1();
  if (name == "mobilenet_v2") return mobileNetV2();
  if (name == "tiny_cnn") return tinyCnn();
  if (name == "conv_bench") return convBench();
  return hal::invalidArgument(
      "unknown built-in model '{}' (available: builtin:mobilenet_v1, builtin:mobilenet_v2, builtin:tiny_cnn, "
      "builtin:conv_bench)",
      name);
}

std::vector<uint8_t> makeSyntheticInput(const hal::Model& model, uint64_t seed) {
  const hal::Operand& input = model.main.operands.at(model.main.inputIndexes.at(0));
  size_t count = 1;
  for (uint32_t d : input.dimensions) count *= d;
  std::vector<uint8_t> bytes(count * hal::sizeOfElement(input.type));
  SplitMix64 random(seed);
  for (auto& b : bytes) b = static_cast<uint8_t>(random.uniform(0, 255));
  return bytes;
}

}  // namespace sable::runtime
