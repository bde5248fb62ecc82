// Writes the small models of tests/tools/run_io_cli_test.py into DIR: segmentation-like models whose
// class map is known by construction (ARG_MAX over an RGB image's channels: a red pixel is class 0,
// green 1, blue 2), in NHWC uint8 with a second output (ARG_MIN, for .npz), NCHW uint8, and NHWC
// float32; a pose-shaped RESHAPE whose keypoints are its input; and the float32
// TFLite_Detection_PostProcess of tflite_test_model.h (fast NMS). Usage: make_run_models DIR
#include <cstdio>
#include <fstream>
#include <string>

#include "tflite_test_model.h"

namespace {

using namespace sable::tflitetest;
using B = fb::BuiltinOperator;

TensorDesc int32Tensor(std::vector<int32_t> shape, uint32_t buffer) {
  TensorDesc t;
  t.shape = std::move(shape);
  t.type = fb::TensorType::INT32;
  t.buffer = buffer;
  return t;
}

// input [1,8,8,3] or [1,3,8,8] → ARG_MAX over the channels → [1,8,8] int32 (and ARG_MIN too when
// `twoOutputs`).
ModelDesc argMaxImage(bool nchw, bool isFloat, bool twoOutputs) {
  ModelDesc m;
  m.opcodes = {opcode(B::ARG_MAX), opcode(B::ARG_MIN)};
  m.buffers = {{}, bytesOf({nchw ? 1 : 3})};
  const std::vector<int32_t> shape = nchw ? std::vector<int32_t>{1, 3, 8, 8} : std::vector<int32_t>{1, 8, 8, 3};
  TensorDesc input = isFloat ? TensorDesc{} : tensor(shape, fb::TensorType::UINT8, 0, 1.0f / 128, 128);
  if (isFloat) {
    input.shape = shape;
    input.type = fb::TensorType::FLOAT32;
  }
  TensorDesc axis = int32Tensor({}, 1);
  m.tensors = {input, axis, int32Tensor({1, 8, 8}, 0), int32Tensor({1, 8, 8}, 0)};
  OpDesc argMax = op(0, {0, 1}, {2});
  argMax.outputType = fb::TensorType::INT32;
  m.operators = {argMax};
  m.inputs = {0};
  m.outputs = {2};
  if (twoOutputs) {
    OpDesc argMin = op(1, {0, 1}, {3});
    argMin.outputType = fb::TensorType::INT32;
    m.operators.push_back(argMin);
    m.outputs.push_back(3);
  }
  return m;
}

// input float32 [1,17,3] → RESHAPE → [1,1,17,3]: a pose model's output is whatever keypoints the
// test feeds it.
ModelDesc poseReshape() {
  ModelDesc m;
  m.opcodes = {opcode(B::RESHAPE)};
  m.buffers = {{}};
  TensorDesc in, out;
  in.shape = {1, 17, 3};
  in.type = fb::TensorType::FLOAT32;
  out.shape = {1, 1, 17, 3};
  out.type = fb::TensorType::FLOAT32;
  m.tensors = {in, out};
  m.operators = {op(0, {0}, {1})};
  m.inputs = {0};
  m.outputs = {1};
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::pair<const char*, ModelDesc> models[] = {{"seg_nhwc.tflite", argMaxImage(false, false, true)},
                                                      {"seg_nchw.tflite", argMaxImage(true, false, false)},
                                                      {"seg_float.tflite", argMaxImage(false, true, false)},
                                                      {"pose.tflite", poseReshape()},
                                                      {"detect.tflite", detectionPostProcess(false, false)}};
  for (const auto& [name, desc] : models) {
    const auto bytes = serialize(desc);
    std::ofstream file(std::string(argv[1]) + "/" + name, std::ios::binary);
    file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!file.flush()) {
      std::fprintf(stderr, "cannot write %s/%s\n", argv[1], name);
      return 1;
    }
  }
  return 0;
}
