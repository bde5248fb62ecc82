// `sable mlts`: the benchmark half — each model of the models directory on each device, in a
// child process per (model, device): compile time, latency of N executions, and the outputs for
// the test images, compared with the CPU reference's by the parent.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mlts_child.h"
#include "sable/hal/result.h"
#include "sable/hal/types.h"

namespace sable::tools::mlts {

// A model of the models directory with the inputs it runs on: one per test image when its input
// is an image (as `sable run --image` makes it), else one synthetic input (as `sable run` makes it).
struct BenchModel {
  std::string name;  // the file name
  std::string path;
  hal::Model model;
  std::vector<std::string> inputNames;                   // the image's file name, or "synthetic (seed 1)"
  std::vector<std::vector<std::vector<uint8_t>>> inputs;  // [run][model input] bytes
};

// The models of `dir` (every *.tflite, by name) with the test images of the directory (*.bmp,
// *.png, *.jpg) as their inputs. An error names a directory without models, or a model or image
// that does not load.
hal::Result<std::vector<BenchModel>> loadBenchModels(const std::string& dir);

// How one model compared with the CPU reference's outputs on the same images.
struct Accuracy {
  size_t inputs = 0;
  size_t top1Agreements = 0;  // inputs whose top-1 class (output 0) equals the reference's
  size_t elements = 0;        // output elements compared, over all inputs and outputs
  size_t identical = 0;       // of which bit-identical
  int64_t maxAbsDifference = 0;  // in stored (quantized) units
  bool sizeMismatch = false;
  bool pass = false;  // every top-1 agrees, no difference exceeds the tolerance, and the device is deterministic
};

// One (model, device) measurement.
struct BenchResult {
  std::string model;
  std::string device;
  std::vector<std::string> inputNames;  // as BenchModel::inputNames
  ChildOutcome child;  // how its process ended; the fields below are valid on SUCCESS
  size_t operations = 0;
  size_t supportedOperations = 0;
  bool ran = false;      // false: the device does not run the whole model (nothing measured)
  std::string plan;      // auto: the devices the steps ran on ("sable-npu 27 ops, cpu-reference 4 ops")
  double compileMs = 0;  // prepareModel, wall clock
  std::vector<double> latenciesMs;  // every timed execution after the warm-up
  double medianMs = 0;
  double p90Ms = 0;
  bool deterministic = true;  // every timed execution produced the warm-up's outputs
  std::vector<std::vector<std::vector<uint8_t>>> outputs;  // [input][output] bytes
  std::vector<uint32_t> top1;                              // per input, output 0
  bool compared = false;                                   // accuracy was computed (a reference exists)
  Accuracy accuracy;
};

// Runs `model` on `device` in a child: `iterations` timed executions (the first a warm-up, not
// counted), after one execution per input for the outputs.
BenchResult benchmark(const BenchModel& model, const std::string& device, int iterations,
                      std::chrono::milliseconds timeout);

// Compares `result`'s outputs with `reference`'s (the CPU reference's run of the same model);
// `tolerance` in stored units (the NNAPI tolerance of real quantized MobileNets is 3).
void compareWithReference(BenchResult& result, const BenchResult& reference, const hal::Model& model,
                          int64_t tolerance);

// The p-th percentile (0..100) of `values`, nearest rank; 0 for none.
double percentile(std::vector<double> values, double p);

nlohmann::json toJson(const BenchResult& result);

}  // namespace sable::tools::mlts
