// NumPy's .npy files (format versions 1.0, 2.0 and 3.0: a magic string, a header dict with
// 'descr', 'fortran_order' and 'shape', then the array's bytes in C order) and .npz archives (a zip
// of .npy files, written stored, uncompressed, with libzip): `sable run --input` reads them and
// `sable run --output` writes them (docs/usage.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sable/hal/result.h"
#include "sable/hal/types.h"

namespace sable::tools {

struct NpyArray {
  std::string descr;               // e.g. "|u1", "<f4"
  std::vector<uint64_t> shape;     // () is a scalar
  std::vector<uint8_t> data;       // the elements, C order, little-endian
};

// The NumPy dtype string of a tensor type ("|u1" for TENSOR_QUANT8_ASYMM, "<f4" for
// TENSOR_FLOAT32, ...); empty for a type with no NumPy equivalent.
std::string npyDescr(hal::OperandType type);

// Parses a whole .npy file. `name` (the file's path) is named in every error: a file that is not
// .npy, a truncated header or body, a header without descr/fortran_order/shape, a Fortran-order
// array, or data whose size disagrees with the shape is an INVALID_ARGUMENT error saying which.
hal::Result<NpyArray> parseNpy(const std::vector<uint8_t>& bytes, const std::string& name);

// Checks an array against a model's input operand: the dtype must be the operand's and the shape
// its dimensions (a leading batch of 1 may be left out). The error names the input's index.
hal::Result<void> checkNpyFitsInput(const NpyArray& array, const hal::Operand& input, size_t index,
                              const std::string& name);

// The bytes of a version 1.0 .npy file (header padded to a multiple of 64 bytes).
std::vector<uint8_t> writeNpy(const NpyArray& array);

// Writes `path` as a .npz: one stored member "NAME.npy" per array, in the order given.
hal::Result<void> writeNpz(const std::string& path, const std::vector<std::pair<std::string, NpyArray>>& arrays);

}  // namespace sable::tools
