#include "sable/crypto/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sodium.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "sable/firmware/host_interface.h"

namespace sable::crypto {

namespace fs = std::filesystem;

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  if (context_ == nullptr || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(context_), EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context_));
    throw std::runtime_error("OpenSSL cannot start a SHA-256");
  }
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context_));
  // OpenSSL keeps per-thread state (allocated on a thread's first call), freed when the thread
  // ends. The HAL's task threads are detached and may still be ending when the process exits,
  // which LeakSanitizer reports as a leak; releasing the state after each digest leaves nothing
  // behind (it is allocated again, cheaply, on the next one).
  OPENSSL_thread_stop();
}

Sha256& Sha256::update(std::span<const uint8_t> bytes) {
  if (!bytes.empty()) EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(context_), bytes.data(), bytes.size());
  return *this;
}

Sha256& Sha256::update(std::string_view bytes) {
  return update(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

Digest Sha256::finish() {
  Digest out{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(context_), out.data(), &length);
  return out;
}

Digest sha256(std::span<const uint8_t> bytes) { return Sha256().update(bytes).finish(); }

std::array<uint8_t, kStreamSignedMessageBytes> streamSignedMessage(const Digest& streamDigest) {
  static_assert(sizeof(SABLE_FW_STREAM_SIGNATURE_DOMAIN) - 1 == 16);
  static_assert(SABLE_FW_STREAM_SIGNED_MESSAGE_BYTES == kStreamSignedMessageBytes);
  std::array<uint8_t, kStreamSignedMessageBytes> message{};
  std::memcpy(message.data(), SABLE_FW_STREAM_SIGNATURE_DOMAIN, 16);
  std::memcpy(message.data() + 16, streamDigest.data(), streamDigest.size());
  return message;
}

bool verifySignature(const PublicKey& key, std::span<const uint8_t> message, const Signature& signature) {
  if (sodium_init() < 0) return false;
  return crypto_sign_verify_detached(signature.data(), message.data(), message.size(), key.data()) == 0;
}

bool verifyStreamSignature(const PublicKey& key, std::span<const uint8_t> stream, const Signature& signature) {
  const auto message = streamSignedMessage(sha256(stream));
  return verifySignature(key, message, signature);
}

std::optional<fs::path> defaultKeyDirectory(std::string& error) {
  if (const char* dir = std::getenv("SABLE_KEY_DIR"); dir != nullptr && *dir != '\0') return fs::path(dir);
  if (const char* data = std::getenv("XDG_DATA_HOME"); data != nullptr && *data != '\0') {
    return fs::path(data) / "sable";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return fs::path(home) / ".local" / "share" / "sable";
  }
  error = "no directory for the driver's signing key: set SABLE_KEY_DIR, XDG_DATA_HOME or HOME";
  return std::nullopt;
}

std::optional<PublicKey> readPublicKey(const fs::path& file, std::string& error) {
  std::ifstream in(file);
  if (!in) {
    error = fmt::format("cannot read the public key {}", file.string());
    return std::nullopt;
  }
  std::string text;
  in >> text;
  PublicKey key{};
  size_t length = 0;
  if (text.size() != 2 * key.size() ||
      sodium_hex2bin(key.data(), key.size(), text.data(), text.size(), nullptr, &length, nullptr) != 0 ||
      length != key.size()) {
    error = fmt::format("{} does not hold a public key ({} hexadecimal digits)", file.string(), 2 * key.size());
    return std::nullopt;
  }
  return key;
}

std::string toHex(std::span<const uint8_t> bytes) {
  std::string out;
  for (uint8_t b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

}  // namespace sable::crypto
