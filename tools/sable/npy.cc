#include "npy.h"

#include <zip.h>

#include <cctype>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sable::tools {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;

// The header dict is a Python literal; only the three keys NumPy writes are read, by a small
// scanner: 'key': value, with value a quoted string, True/False or a tuple of integers.
struct HeaderScanner {
  std::string_view text;
  size_t pos = 0;
  void skipSpace() {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  }
  bool eat(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool quoted(std::string& out) {
    skipSpace();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"')) return false;
    const char q = text[pos++];
    const size_t end = text.find(q, pos);
    if (end == std::string_view::npos) return false;
    out = std::string(text.substr(pos, end - pos));
    pos = end + 1;
    return true;
  }
  bool word(std::string_view w) {
    skipSpace();
    if (text.substr(pos, w.size()) != w) return false;
    pos += w.size();
    return true;
  }
  bool tuple(std::vector<uint64_t>& out) {
    if (!eat('(')) return false;
    out.clear();
    while (true) {
      if (eat(')')) return true;
      skipSpace();
      if (pos >= text.size() || !std::isdigit(static_cast<unsigned char>(text[pos]))) return false;
      uint64_t v = 0;
      while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
        if (v > (uint64_t{1} << 40)) return false;  // absurd: no tensor has such an extent
        v = v * 10 + static_cast<uint64_t>(text[pos++] - '0');
      }
      out.push_back(v);
      if (!eat(',')) return eat(')');
    }
  }
};

uint64_t elementBytesOf(const std::string& descr) {
  if (descr.size() < 3) return 0;
  uint64_t n = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(descr[i]))) return 0;
    n = n * 10 + static_cast<uint64_t>(descr[i] - '0');
  }
  return n;
}

}  // namespace

std::string npyDescr(hal::OperandType type) {
  using T = hal::OperandType;
  switch (type) {
    case T::TENSOR_QUANT8_ASYMM: return "|u1";
    case T::TENSOR_QUANT8_ASYMM_SIGNED:
    case T::TENSOR_QUANT8_SYMM:
    case T::TENSOR_QUANT8_SYMM_PER_CHANNEL: return "|i1";
    case T::TENSOR_BOOL8: return "|b1";
    case T::TENSOR_QUANT16_ASYMM: return "<u2";
    case T::TENSOR_QUANT16_SYMM: return "<i2";
    case T::TENSOR_FLOAT16: return "<f2";
    case T::TENSOR_FLOAT32: return "<f4";
    case T::TENSOR_INT32: return "<i4";
    default: return "";
  }
}

hal::Result<NpyArray> parseNpy(const std::vector<uint8_t>& bytes, const std::string& name) {
  if (bytes.size() < kMagicBytes + 4 || std::memcmp(bytes.data(), kMagic, kMagicBytes) != 0)
    return hal::invalidArgument("'{}' is not a .npy file (no \\x93NUMPY magic; {} bytes)", name, bytes.size());
  const uint8_t major = bytes[6];
  size_t headerLength = 0, headerStart = 0;
  if (major == 1) {
    headerLength = bytes[8] | (size_t{bytes[9]} << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return hal::invalidArgument("'{}': truncated .npy header", name);
    headerLength = bytes[8] | (size_t{bytes[9]} << 8) | (size_t{bytes[10]} << 16) | (size_t{bytes[11]} << 24);
    headerStart = 12;
  } else {
    return hal::invalidArgument("'{}': .npy format version {}.{} (1, 2 and 3 are read)", name, major, bytes[7]);
  }
  if (bytes.size() < headerStart + headerLength)
    return hal::invalidArgument("'{}': truncated .npy header ({} header bytes announced, the file has {} bytes)",
                                name, headerLength, bytes.size());
  HeaderScanner s{std::string_view(reinterpret_cast<const char*>(bytes.data()) + headerStart, headerLength)};
  NpyArray array;
  bool haveDescr = false, haveOrder = false, haveShape = false, fortran = false;
  if (!s.eat('{')) return hal::invalidArgument("'{}': the .npy header is not a dict", name);
  while (!s.eat('}')) {
    std::string key;
    if (!s.quoted(key) || !s.eat(':'))
      return hal::invalidArgument("'{}': malformed .npy header at byte {}", name, headerStart + s.pos);
    bool ok = false;
    if (key == "descr") {
      ok = haveDescr = s.quoted(array.descr);
    } else if (key == "fortran_order") {
      if (s.word("True")) ok = haveOrder = fortran = true;
      else if (s.word("False")) ok = haveOrder = true;
    } else if (key == "shape") {
      ok = haveShape = s.tuple(array.shape);
    }
    if (!ok) return hal::invalidArgument("'{}': malformed or unknown key '{}' in the .npy header", name, key);
    if (!s.eat(',')) {
      if (!s.eat('}')) return hal::invalidArgument("'{}': malformed .npy header (no closing brace)", name);
      break;
    }
  }
  if (!haveDescr || !haveOrder || !haveShape)
    return hal::invalidArgument("'{}': the .npy header lacks {}", name,
                                !haveDescr ? "'descr'" : !haveOrder ? "'fortran_order'" : "'shape'");
  if (fortran)
    return hal::invalidArgument("'{}': the array is in Fortran order; save it in C order (np.ascontiguousarray)",
                                name);
  const uint64_t elementBytes = elementBytesOf(array.descr);
  if (elementBytes == 0 || (array.descr[0] != '<' && array.descr[0] != '|' && !(array.descr[0] == '=')))
    return hal::invalidArgument("'{}': dtype '{}' is not read (little-endian or single-byte numbers only)", name,
                                array.descr);
  uint64_t elements = 1;
  for (uint64_t d : array.shape) elements *= d;
  const size_t body = bytes.size() - headerStart - headerLength;
  if (body != elements * elementBytes)
    return hal::invalidArgument("'{}': shape ({}) of {} needs {} data bytes, the file has {}{}", name,
                                fmt::join(array.shape, ", "), array.descr, elements * elementBytes, body,
                                body < elements * elementBytes ? " (truncated)" : "");
  array.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(headerStart + headerLength), bytes.end());
  return array;
}

hal::Result<void> checkNpyFitsInput(const NpyArray& array, const hal::Operand& input, size_t index,
                                    const std::string& name) {
  const std::string want = npyDescr(input.type);
  std::string have = array.descr;
  if (!have.empty() && have[0] == '=') have[0] = '<';  // native order on this little-endian host
  if (have != want)
    return hal::invalidArgument("'{}': dtype '{}', but input {} is {} (dtype '{}')", name, array.descr, index,
                                hal::toString(input.type), want);
  std::vector<uint64_t> dims(input.dimensions.begin(), input.dimensions.end());
  std::vector<uint64_t> shape = array.shape;
  if (shape.size() + 1 == dims.size() && !dims.empty() && dims[0] == 1) shape.insert(shape.begin(), 1);
  if (shape != dims)
    return hal::invalidArgument("'{}': shape ({}), but input {} has shape [{}]", name, fmt::join(array.shape, ", "),
                                index, fmt::join(input.dimensions, ", "));
  return {};
}

std::vector<uint8_t> writeNpy(const NpyArray& array) {
  // Python's tuple syntax: (), (3,), (2, 3).
  std::string shape = fmt::format("{}", fmt::join(array.shape, ", "));
  if (array.shape.size() == 1) shape += ",";
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", array.descr, shape);
  // Magic (6) + version (2) + length (2) + header + '\n', a multiple of 64.
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header.push_back('\n');
  std::vector<uint8_t> out(kMagic, kMagic + kMagicBytes);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<uint8_t>(header.size() & 0xff));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), array.data.begin(), array.data.end());
  return out;
}

hal::Result<void> writeNpz(const std::string& path, const std::vector<std::pair<std::string, NpyArray>>& arrays) {
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  if (archive == nullptr) {
    zip_error_t e;
    zip_error_init_with_code(&e, error);
    auto result = hal::invalidArgument("cannot write '{}': {}", path, zip_error_strerror(&e));
    zip_error_fini(&e);
    return result;
  }
  // libzip reads the sources when the archive is closed: the bytes must live until then.
  std::vector<std::vector<uint8_t>> files;
  files.reserve(arrays.size());
  for (const auto& [name, array] : arrays) {
    files.push_back(writeNpy(array));
    zip_source_t* source = zip_source_buffer(archive, files.back().data(), files.back().size(), 0);
    const zip_int64_t index =
        source == nullptr ? -1 : zip_file_add(archive, (name + ".npy").c_str(), source, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      if (source != nullptr) zip_source_free(source);
      auto result = hal::generalFailure("writing '{}': {}", path, zip_strerror(archive));
      zip_discard(archive);
      return result;
    }
    zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
  }
  if (zip_close(archive) != 0) {
    auto result = hal::invalidArgument("cannot write '{}': {}", path, zip_strerror(archive));
    zip_discard(archive);
    return result;
  }
  return {};
}

}  // namespace sable::tools
