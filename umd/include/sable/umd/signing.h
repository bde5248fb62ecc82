// The driver's signing key (docs/cache.md, "Keys"): an Ed25519 key pair (libsodium) that signs
// every command stream the driver registers with the firmware and every model cache it writes.
// Both are signed as a prehash: Ed25519 over a short message holding the SHA-256 (OpenSSL, which
// uses the CPU's SHA extensions) of the long one, so that the long bytes are hashed once, fast.
// It is created on first use in the driver's own data directory (crypto::defaultKeyDirectory),
// readable by its owner only, and never leaves this process except as its public half (driver.pub,
// which the device server reads). Hashing and verification are sable/crypto/crypto.h's.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "sable/crypto/crypto.h"
#include "sable/hal/result.h"

namespace sable::umd {

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

class SigningKey {
 public:
  // Loads `directory`/driver.key, or creates it (and driver.pub beside it) when it does not exist:
  // the directory with mode 0700, the key with 0600, written under a temporary name and linked in
  // place, so that concurrent first uses end with one key. A key file that is not the owner's
  // alone, or has the wrong size, is an error (never silently replaced).
  static hal::Result<SigningKey> loadOrCreate(const std::filesystem::path& directory);
  // The key of crypto::defaultKeyDirectory(), loaded once per process.
  static hal::Result<const SigningKey*> processKey();

  const crypto::PublicKey& publicKey() const { return public_; }
  crypto::Signature sign(std::span<const uint8_t> message) const;
  // The signature the firmware checks for a command stream: sign(crypto::streamSignedMessage(crypto::sha256(stream))).
  crypto::Signature signStream(std::span<const uint8_t> stream) const;
  // A secret for `purpose` and `context`: BLAKE2b keyed with the key's private seed, so that it
  // lives and dies with the key and, like it, never appears in a blob.
  Secret deriveSecret(std::string_view purpose, std::span<const uint8_t> context) const;

 private:
  SigningKey() = default;
  std::array<uint8_t, 64> secret_{};  // libsodium's Ed25519 secret key (seed and public key)
  crypto::PublicKey public_{};
};

}  // namespace sable::umd
