// The driver's signing key (docs/cache.md, "Keys"): an Ed25519 key pair (libsodium) that signs
// every command stream the driver registers with the firmware and every model cache it writes.
// Both are signed as a prehash: Ed25519 over a short message holding the SHA-256 (OpenSSL, which
// uses the CPU's SHA extensions) of the long one, so that the long bytes are hashed once, fast.
// It is created on first use in the driver's own data directory, readable by its owner only,
// and never leaves this process except as its public half (which the device server is given).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "sable/hal/result.h"

namespace sable::umd {

constexpr size_t kPublicKeyBytes = 32;
constexpr size_t kSignatureBytes = 64;
using PublicKey = std::array<uint8_t, kPublicKeyBytes>;
using Signature = std::array<uint8_t, kSignatureBytes>;
constexpr size_t kDigestBytes = 32;
using Digest = std::array<uint8_t, kDigestBytes>;

// SHA-256, incrementally (OpenSSL's EVP interface: SHA-NI where the CPU has it).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  Sha256& update(std::span<const uint8_t> bytes);
  Sha256& update(std::string_view bytes);
  Digest finish();

 private:
  void* context_;  // EVP_MD_CTX
};
Digest sha256(std::span<const uint8_t> bytes);

// A secret of the driver's for one purpose, derived from its signing key (SigningKey::deriveSecret).
constexpr size_t kSecretBytes = 32;
using Secret = std::array<uint8_t, kSecretBytes>;
constexpr size_t kTagBytes = 16;
using Tag = std::array<uint8_t, kTagBytes>;
// The Poly1305 authenticator of `bytes` under `key` and `nonce`: ChaCha20-Poly1305 (RFC 8439;
// OpenSSL, vectorised: about 12 GB/s on this project's machines, eight times SHA-256 with SHA-NI)
// with `bytes` as associated data and nothing encrypted. Without the key nobody can make a tag
// that verifies; one key must never authenticate two different messages under one nonce.
hal::Result<Tag> authenticate(const Secret& key, uint64_t nonce, std::span<const uint8_t> bytes);

// What a command stream's signature signs (docs/cache.md, "Signed programs"; the firmware builds
// the same bytes, sable/firmware/host_interface.h): the 16-byte domain
// SABLE_FW_STREAM_SIGNATURE_DOMAIN, then SHA-256 of the stream's bytes.
constexpr size_t kStreamSignedMessageBytes = 16 + kDigestBytes;
std::array<uint8_t, kStreamSignedMessageBytes> streamSignedMessage(const Digest& streamDigest);

// The directory the key lives in: $SABLE_KEY_DIR, else $XDG_DATA_HOME/sable, else
// $HOME/.local/share/sable. An error when none of them is set.
hal::Result<std::filesystem::path> defaultKeyDirectory();

class SigningKey {
 public:
  // Loads `directory`/driver.key, or creates it (and driver.pub beside it) when it does not exist:
  // the directory with mode 0700, the key with 0600, written under a temporary name and linked in
  // place, so that concurrent first uses end with one key. A key file that is not the owner's
  // alone, or has the wrong size, is an error (never silently replaced).
  static hal::Result<SigningKey> loadOrCreate(const std::filesystem::path& directory);
  // The key of defaultKeyDirectory(), loaded once per process.
  static hal::Result<const SigningKey*> processKey();

  const PublicKey& publicKey() const { return public_; }
  Signature sign(std::span<const uint8_t> message) const;
  // The signature the firmware checks for a command stream: sign(streamSignedMessage(sha256(stream))).
  Signature signStream(std::span<const uint8_t> stream) const;
  // A secret for `purpose` and `context`: BLAKE2b keyed with the key's private seed, so that it
  // lives and dies with the key and, like it, never appears in a blob.
  Secret deriveSecret(std::string_view purpose, std::span<const uint8_t> context) const;

 private:
  SigningKey() = default;
  std::array<uint8_t, 64> secret_{};  // libsodium's Ed25519 secret key (seed and public key)
  PublicKey public_{};
};

// True when `signature` is `key`'s Ed25519 signature of `message`.
bool verifySignature(const PublicKey& key, std::span<const uint8_t> message, const Signature& signature);
// True when `signature` is `key`'s signature of the command stream `stream` (signStream).
bool verifyStreamSignature(const PublicKey& key, std::span<const uint8_t> stream, const Signature& signature);

// Reads a public key file (driver.pub: the 32 bytes as 64 hexadecimal digits and a newline).
hal::Result<PublicKey> readPublicKey(const std::filesystem::path& file);
std::string toHex(std::span<const uint8_t> bytes);

}  // namespace sable::umd
