// The driver's signing key (docs/cache.md, "Keys"): an Ed25519 key pair (libsodium) that signs
// every command stream the driver registers with the firmware and every model cache it writes.
// It is created on first use in the driver's own data directory, readable by its owner only,
// and never leaves this process except as its public half (which the device server is given).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "sable/hal/result.h"

namespace sable::umd {

constexpr size_t kPublicKeyBytes = 32;
constexpr size_t kSignatureBytes = 64;
using PublicKey = std::array<uint8_t, kPublicKeyBytes>;
using Signature = std::array<uint8_t, kSignatureBytes>;

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

 private:
  SigningKey() = default;
  std::array<uint8_t, 64> secret_{};  // libsodium's Ed25519 secret key (seed and public key)
  PublicKey public_{};
};

// True when `signature` is `key`'s Ed25519 signature of `message`.
bool verifySignature(const PublicKey& key, std::span<const uint8_t> message, const Signature& signature);

// Reads a public key file (driver.pub: the 32 bytes as 64 hexadecimal digits and a newline).
hal::Result<PublicKey> readPublicKey(const std::filesystem::path& file);
std::string toHex(std::span<const uint8_t> bytes);

}  // namespace sable::umd
