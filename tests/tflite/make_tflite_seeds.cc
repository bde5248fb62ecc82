// Writes the seed corpus of the tflite_import fuzz target (tests/fuzz/tflite_import/): the small
// generated models of tflite_test_model.h, so the fuzzer starts from valid files that reach the
// operator mapping. Usage: make_tflite_seeds DIR
#include <cstdio>
#include <fstream>
#include <string>

#include "tflite_test_model.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  using namespace sable::tflitetest;
  const std::pair<const char*, ModelDesc> seeds[] = {
      {"small_cnn.tflite", smallCnn()}, {"small_cnn_int8.tflite", smallCnnInt8()}, {"depthwise_add.tflite", depthwiseAdd()},
      {"operator_chain.tflite", operatorChain()}, {"arg_min_max.tflite", argMinMax()},
      {"sequence_lstm.tflite", sequenceLstm()}, {"elementwise.tflite", elementwise()},
      {"reductions.tflite", reductions()}, {"shape_operators.tflite", shapeOperators()},
      {"batch_space_lrn.tflite", batchSpaceLrn()}, {"strided_split_v.tflite", stridedSplitV()},
      {"transpose_conv.tflite", transposeConv()}, {"recurrent.tflite", recurrentModels()},
      {"bidirectional_lstm.tflite", bidirectionalLstm()},
      {"detection_postprocess.tflite", detectionPostProcess(true, false)},
      {"extension_operators.tflite", extensionOperators()}};
  for (const auto& [name, desc] : seeds) {
    const auto bytes = serialize(desc);
    std::ofstream(std::string(argv[1]) + "/" + name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  return 0;
}
