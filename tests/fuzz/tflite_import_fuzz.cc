// libFuzzer target: the TFLite importer (runtime/src/tflite, docs/tflite.md), which reads files a
// user hands to `sable run`. The input is the file. Whatever it holds, the importer must not crash,
// leak or read outside it, and a model it returns must be a valid NN HAL model.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sable/hal/validation.h"
#include "sable/runtime/tflite_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Aligned like a file read into memory (importTfliteFile): the verifier checks alignment
  // relative to the buffer start, and an unaligned copy would only test libFuzzer's allocator.
  std::vector<uint64_t> storage((size + 7) / 8);
  if (size != 0) std::memcpy(storage.data(), data, size);
  auto model = sable::runtime::importTflite({reinterpret_cast<const uint8_t*>(storage.data()), size});
  if (model.ok() && !sable::hal::validateModel(*model).ok()) std::abort();
  return 0;
}
