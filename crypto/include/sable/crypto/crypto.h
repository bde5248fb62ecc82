// The primitives of signed command streams and caches (docs/cache.md, "Keys"): SHA-256 (OpenSSL,
// which uses the CPU's SHA extensions) and Ed25519 verification (libsodium). Signing needs the
// driver's private key and lives in umd/ (sable/umd/signing.h); everything here is what a device
// needs too, so it depends on nothing above the firmware's interface.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace sable::crypto {

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

// What a command stream's signature signs (docs/cache.md, "Signed programs"; the firmware builds
// the same bytes, sable/firmware/host_interface.h): the 16-byte domain
// SABLE_FW_STREAM_SIGNATURE_DOMAIN, then SHA-256 of the stream's bytes.
constexpr size_t kStreamSignedMessageBytes = 16 + kDigestBytes;
std::array<uint8_t, kStreamSignedMessageBytes> streamSignedMessage(const Digest& streamDigest);

// True when `signature` is `key`'s Ed25519 signature of `message`.
bool verifySignature(const PublicKey& key, std::span<const uint8_t> message, const Signature& signature);
// True when `signature` is `key`'s signature of the command stream `stream`
// (verifySignature over streamSignedMessage(sha256(stream))).
bool verifyStreamSignature(const PublicKey& key, std::span<const uint8_t> stream, const Signature& signature);

// The directory the driver's key pair lives in: $SABLE_KEY_DIR, else $XDG_DATA_HOME/sable, else
// $HOME/.local/share/sable; nullopt (and `error` set) when none of them is set. The device server
// reads the public half from it; only the driver ever opens the private half.
std::optional<std::filesystem::path> defaultKeyDirectory(std::string& error);
// The public key file's name in that directory.
inline constexpr std::string_view kPublicKeyFileName = "driver.pub";

// Reads a public key file (driver.pub: the 32 bytes as 64 hexadecimal digits and a newline);
// nullopt and `error` naming the file and the fault when it cannot.
std::optional<PublicKey> readPublicKey(const std::filesystem::path& file, std::string& error);
std::string toHex(std::span<const uint8_t> bytes);

}  // namespace sable::crypto
