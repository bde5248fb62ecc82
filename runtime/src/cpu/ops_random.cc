// Hashing and sampling kernels: LSH_PROJECTION, RANDOM_MULTINOMIAL.
//
// LSH_PROJECTION follows the reference bit for bit: each hash bit is the sign of the (weighted)
// sum over the input rows of farmhash's Fingerprint64 of (seed as float32, row bytes), summed in
// double precision. Fingerprint64 is implemented here from farmhash's specification (farmhashna
// Hash64 for inputs of up to 64 bytes, the farmhashna long-input loop beyond).
//
// RANDOM_MULTINOMIAL draws from the categorical distribution softmax(logits) with a deterministic
// generator seeded by the operation's two seeds. NNAPI fixes the distribution, not the bits (the
// CTS judges the sample frequencies against softmax(logits)), so the generator is splitmix64.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "kernel_util.h"
#include "operation.h"
#include "sable/runtime/builtin_models.h"

namespace sable::runtime::cpu {
namespace {

using hal::OperandType;
using hal::OperationType;
using hal::Result;

// ---- farmhash Fingerprint64 ---------------------------------------------------------------------

constexpr uint64_t kK0 = 0xc3a5c85c97cb3127ull;
constexpr uint64_t kK1 = 0xb492b66fbe98f273ull;
constexpr uint64_t kK2 = 0x9ae16a3b2f90404full;

// Little-endian loads, whatever the host's byte order.
uint64_t load64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint32_t load32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}
uint64_t rotateRight(uint64_t v, int shift) { return std::rotr(v, shift); }
uint64_t shiftMix(uint64_t v) { return v ^ (v >> 47); }

uint64_t hashLen16(uint64_t u, uint64_t v, uint64_t mul) {
  uint64_t a = (u ^ v) * mul;
  a ^= a >> 47;
  uint64_t b = (v ^ a) * mul;
  b ^= b >> 47;
  return b * mul;
}

uint64_t hashLen0to16(const uint8_t* s, size_t len) {
  if (len >= 8) {
    const uint64_t mul = kK2 + len * 2;
    const uint64_t a = load64(s) + kK2;
    const uint64_t b = load64(s + len - 8);
    const uint64_t c = rotateRight(b, 37) * mul + a;
    const uint64_t d = (rotateRight(a, 25) + b) * mul;
    return hashLen16(c, d, mul);
  }
  if (len >= 4) {
    const uint64_t mul = kK2 + len * 2;
    const uint64_t a = load32(s);
    return hashLen16(len + (a << 3), load32(s + len - 4), mul);
  }
  if (len > 0) {
    const uint8_t a = s[0], b = s[len >> 1], c = s[len - 1];
    const uint32_t y = static_cast<uint32_t>(a) + (static_cast<uint32_t>(b) << 8);
    const uint32_t z = static_cast<uint32_t>(len) + (static_cast<uint32_t>(c) << 2);
    return shiftMix(y * kK2 ^ z * kK0) * kK2;
  }
  return kK2;
}

uint64_t hashLen17to32(const uint8_t* s, size_t len) {
  const uint64_t mul = kK2 + len * 2;
  const uint64_t a = load64(s) * kK1;
  const uint64_t b = load64(s + 8);
  const uint64_t c = load64(s + len - 8) * mul;
  const uint64_t d = load64(s + len - 16) * kK2;
  return hashLen16(rotateRight(a + b, 43) + rotateRight(c, 30) + d, a + rotateRight(b + kK2, 18) + c, mul);
}

uint64_t hashLen33to64(const uint8_t* s, size_t len) {
  const uint64_t mul = kK2 + len * 2;
  const uint64_t a = load64(s) * kK2;
  const uint64_t b = load64(s + 8);
  const uint64_t c = load64(s + len - 8) * mul;
  const uint64_t d = load64(s + len - 16) * kK2;
  const uint64_t y = rotateRight(a + b, 43) + rotateRight(c, 30) + d;
  const uint64_t z = hashLen16(y, a + rotateRight(b + kK2, 18) + c, mul);
  const uint64_t e = load64(s + 16) * mul;
  const uint64_t f = load64(s + 24);
  const uint64_t g = (y + load64(s + len - 32)) * mul;
  const uint64_t h = (z + load64(s + len - 24)) * mul;
  return hashLen16(rotateRight(e + f, 43) + rotateRight(g, 30) + h, e + rotateRight(f + a, 18) + g, mul);
}

std::pair<uint64_t, uint64_t> weakHashLen32WithSeeds(const uint8_t* s, uint64_t a, uint64_t b) {
  const uint64_t w = load64(s), x = load64(s + 8), y = load64(s + 16), z = load64(s + 24);
  a += w;
  b = rotateRight(b + a + z, 21);
  const uint64_t c = a;
  a += x;
  a += y;
  b += rotateRight(a, 44);
  return {a + z, b + c};
}

}  // namespace

// Not in the anonymous namespace: the unit tests check it against known values.
uint64_t farmhashFingerprint64(const uint8_t* s, size_t len) {
  if (len <= 16) return hashLen0to16(s, len);
  if (len <= 32) return hashLen17to32(s, len);
  if (len <= 64) return hashLen33to64(s, len);
  constexpr uint64_t kSeed = 81;
  uint64_t x = kSeed;
  uint64_t y = kSeed * kK1 + 113;
  uint64_t z = shiftMix(y * kK2 + 113) * kK2;
  std::pair<uint64_t, uint64_t> v{0, 0}, w{0, 0};
  x = x * kK2 + load64(s);
  const uint8_t* end = s + ((len - 1) / 64) * 64;
  const uint8_t* last64 = end + ((len - 1) & 63) - 63;
  do {
    x = rotateRight(x + y + v.first + load64(s + 8), 37) * kK1;
    y = rotateRight(y + v.second + load64(s + 48), 42) * kK1;
    x ^= w.second;
    y += v.first + load64(s + 40);
    z = rotateRight(z + w.first, 33) * kK1;
    v = weakHashLen32WithSeeds(s, v.second * kK1, x + w.first);
    w = weakHashLen32WithSeeds(s + 32, z + w.second, y + load64(s + 16));
    std::swap(z, x);
    s += 64;
  } while (s != end);
  const uint64_t mul = kK1 + ((z & 0xff) << 1);
  s = last64;
  w.first += ((len - 1) & 63);
  v.first += w.first;
  w.first += v.first;
  x = rotateRight(x + y + v.first + load64(s + 8), 37) * mul;
  y = rotateRight(y + v.second + load64(s + 48), 42) * mul;
  x ^= w.second * 9;
  y += v.first * 9 + load64(s + 40);
  z = rotateRight(z + w.first, 33) * mul;
  v = weakHashLen32WithSeeds(s, v.second * mul, x + w.first);
  w = weakHashLen32WithSeeds(s + 32, z + w.second, y + load64(s + 16));
  std::swap(z, x);
  return hashLen16(hashLen16(v.first, w.first, mul) + shiftMix(y) * kK0 + z, hashLen16(v.second, w.second, mul) + x,
                   mul);
}

namespace {

// ---- LSH_PROJECTION ----------------------------------------------------------------------------

enum class LshType : int32_t { kSparseDeprecated = 1, kDense = 2, kSparse = 3 };

// The sign bit of sum over rows of weight[row] * Fingerprint64(seed, row) (weights 1 when absent).
int lshSignBit(const Tensor& input, const std::vector<float>& weights, float seed) {
  const size_t rows = input.dim(0);
  const size_t rowBytes = rows == 0 ? 0 : input.elementCount() * hal::sizeOfElement(input.type) / rows;
  std::vector<uint8_t> key(sizeof(float) + rowBytes);
  std::memcpy(key.data(), &seed, sizeof(float));
  double score = 0.0;
  for (size_t r = 0; r < rows; ++r) {
    std::memcpy(key.data() + sizeof(float), input.buffer + r * rowBytes, rowBytes);
    const double value = static_cast<double>(static_cast<int64_t>(farmhashFingerprint64(key.data(), key.size())));
    score += weights.empty() ? value : static_cast<double>(weights[r]) * value;
  }
  return score > 0 ? 1 : 0;
}

// Inputs: 0 hash seeds [tables, bits] (float), 1 input [rows, ...] of any type, 2 row weights
// [rows] (optional), 3 projection type. Output: sparse [tables] (each table's bits as an integer,
// offset by table * 2^bits for SPARSE), dense [tables * bits].
Result<void> lshProjectionKernel(OperationContext& context) {
  if (context.inputCount() != 4 || context.outputCount() != 1) {
    return hal::invalidArgument("{} takes 4 inputs and 1 output, given {} and {}", nameOf(context),
                                context.inputCount(), context.outputCount());
  }
  const Tensor& hash = context.input(0);
  const Tensor& input = context.input(1);
  const OperandType type = hash.type;
  if (type != OperandType::TENSOR_FLOAT32 && type != OperandType::TENSOR_FLOAT16) {
    return hal::invalidArgument("{} hash of type {} is not supported", nameOf(context), hal::toString(type));
  }
  SABLE_TRY(checkInputRank(context, 0, 2, "hash"));
  if (context.isOmitted(1) || input.rank() < 1 ||
      !hasStorageFor(input, input.elementCount(), hal::sizeOfElement(input.type)) ||
      !hasStorageFor(hash, hash.elementCount(), hal::sizeOfElement(type))) {
    return hal::invalidArgument("{} needs a hash and an input of rank >= 1 with values", nameOf(context));
  }
  const uint32_t tables = hash.dim(0), bits = hash.dim(1);
  if (bits > 32) return hal::invalidArgument("{} has {} bits per table, at most 32", nameOf(context), bits);
  SABLE_ASSIGN_OR_RETURN(int32_t code, int32Scalar(context, 3, "projection type"));
  if (code < 1 || code > 3) {
    return hal::invalidArgument("{} type {} is not one of SPARSE_DEPRECATED (1), DENSE (2), SPARSE (3)",
                                nameOf(context), code);
  }
  const LshType lshType = static_cast<LshType>(code);
  std::vector<float> weights;
  if (!context.isOmitted(2) && context.input(2).elementCount() > 0 && context.input(2).buffer != nullptr) {
    const Tensor& w = context.input(2);
    SABLE_TRY(checkInputType(context, 2, type, "weights"));
    if (w.rank() != 1 || w.dim(0) != input.dim(0)) {
      return hal::invalidArgument("{} weights {} must be [{}], one per input row", nameOf(context),
                                  dimsToString(w.dimensions), input.dim(0));
    }
    weights = realValues(w);
  }
  SABLE_TRY(checkOutputType(context, OperandType::TENSOR_INT32));
  const std::vector<float> seeds = realValues(hash);
  const bool dense = lshType == LshType::kDense;
  SABLE_ASSIGN_OR_RETURN(Tensor * out, context.setOutputShape(0, {dense ? tables * bits : tables}));
  int32_t* o = out->data<int32_t>();
  for (uint32_t t = 0; t < tables; ++t) {
    uint32_t signature = 0;
    for (uint32_t b = 0; b < bits; ++b) {
      const int bit = lshSignBit(input, weights, seeds[t * bits + b]);
      if (dense) *o++ = bit;
      signature = (signature << 1) | static_cast<uint32_t>(bit);
    }
    if (!dense) {
      const uint32_t offset = lshType == LshType::kSparse ? t * (1u << bits) : 0u;
      *o++ = static_cast<int32_t>(signature + offset);
    }
  }
  return {};
}

// ---- RANDOM_MULTINOMIAL ------------------------------------------------------------------------

// Inputs: 0 logits [batches, classes] (float), 1 number of samples, 2 seeds [2] (INT32).
// Output: [batches, samples] class indices, each drawn with probability softmax(logits).
Result<void> randomMultinomialKernel(OperationContext& context) {
  SABLE_TRY(checkCounts(context, 3, 1));
  const Tensor& logitsIn = context.input(0);
  const OperandType type = logitsIn.type;
  if (type != OperandType::TENSOR_FLOAT32 && type != OperandType::TENSOR_FLOAT16) {
    return hal::invalidArgument("{} logits of type {} are not supported", nameOf(context), hal::toString(type));
  }
  SABLE_TRY(checkInputRank(context, 0, 2, "logits"));
  SABLE_TRY(checkInputType(context, 2, OperandType::TENSOR_INT32, "seeds"));
  if (context.input(2).elementCount() != 2) {
    return hal::invalidArgument("{} seeds (input 2) must be [2], are {}", nameOf(context),
                                dimsToString(context.input(2).dimensions));
  }
  SABLE_ASSIGN_OR_RETURN(int32_t samples, int32Scalar(context, 1, "number of samples"));
  const uint32_t batches = logitsIn.dim(0), classes = logitsIn.dim(1);
  if (samples <= 0 || classes == 0) {
    return hal::invalidArgument("{} needs a positive number of samples and classes, has {} and {}", nameOf(context),
                                samples, classes);
  }
  SABLE_TRY(checkOutputType(context, OperandType::TENSOR_INT32));
  const int32_t* seeds = context.input(2).data<int32_t>();
  SplitMix64 random((static_cast<uint64_t>(static_cast<uint32_t>(seeds[0])) << 32) | static_cast<uint32_t>(seeds[1]));
  const std::vector<float> logits = realValues(logitsIn);
  SABLE_ASSIGN_OR_RETURN(Tensor * out, context.setOutputShape(0, {batches, static_cast<uint32_t>(samples)}));
  std::vector<double> cumulative(classes);
  for (uint32_t b = 0; b < batches; ++b) {
    const float* row = &logits[static_cast<size_t>(b) * classes];
    float maxLogit = row[0];
    for (uint32_t c = 1; c < classes; ++c) maxLogit = std::max(maxLogit, row[c]);
    double total = 0.0;
    for (uint32_t c = 0; c < classes; ++c) {
      // A non-finite logit (e.g. -inf for an impossible class) contributes nothing.
      const double p = std::isfinite(row[c]) ? std::exp(static_cast<double>(row[c]) - maxLogit) : 0.0;
      total += p;
      cumulative[c] = total;
    }
    for (int32_t s = 0; s < samples; ++s) {
      // A uniform double in [0, total) from the top 53 bits.
      const double u = static_cast<double>(random.next() >> 11) * 0x1.0p-53 * total;
      const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
      const uint32_t c = it == cumulative.end() ? classes - 1 : static_cast<uint32_t>(it - cumulative.begin());
      out->data<int32_t>()[static_cast<size_t>(b) * samples + s] = static_cast<int32_t>(c);
    }
  }
  return {};
}

}  // namespace

void registerRandomOperations(std::vector<OperationRegistration>& out) {
  using enum OperandType;
  out.push_back({OperationType::LSH_PROJECTION, lshProjectionKernel, {TENSOR_FLOAT32, TENSOR_FLOAT16}});
  out.push_back({OperationType::RANDOM_MULTINOMIAL, randomMultinomialKernel, {TENSOR_FLOAT32, TENSOR_FLOAT16}});
}

}  // namespace sable::runtime::cpu
