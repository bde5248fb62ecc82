#include "sable/umd/signing.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace sable::umd {
namespace {

namespace fs = std::filesystem;

hal::Result<void> initSodium() {
  if (sodium_init() < 0) return hal::generalFailure("libsodium could not be initialised");
  return {};
}

std::string errnoText(int error) { return std::strerror(error); }

// Writes all of `data` to a new file `path` (mode `mode`), failing if it exists.
hal::Result<void> writeNewFile(const fs::path& path, std::span<const uint8_t> data, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return hal::generalFailure("cannot create {}: {}", path.string(), errnoText(errno));
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      ::unlink(path.c_str());
      return hal::generalFailure("cannot write {}: {}", path.string(), errnoText(error));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(path.c_str());
    return hal::generalFailure("cannot write {}: {}", path.string(), errnoText(errno));
  }
  return {};
}

hal::Result<std::array<uint8_t, 64>> readSecretKey(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return hal::generalFailure("cannot open the signing key {}: {}", path.string(), errnoText(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return hal::generalFailure("the signing key {} is not a regular file", path.string());
  }
  if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    ::close(fd);
    return hal::generalFailure("the signing key {} must belong to this user and be readable by it alone (mode 0600)",
                               path.string());
  }
  std::array<uint8_t, 64> key{};
  size_t done = 0;
  while (done < key.size()) {
    const ssize_t n = ::read(fd, key.data() + done, key.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  uint8_t extra = 0;
  const ssize_t more = ::read(fd, &extra, 1);
  ::close(fd);
  if (done != key.size() || more != 0) {
    return hal::generalFailure("the signing key {} is not {} bytes", path.string(), key.size());
  }
  return key;
}

}  // namespace

hal::Result<SigningKey> SigningKey::loadOrCreate(const fs::path& directory) {
  SABLE_TRY(initSodium());
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec) return hal::generalFailure("cannot create the key directory {}: {}", directory.string(), ec.message());
  const fs::path keyFile = directory / "driver.key";
  const fs::path publicFile = directory / crypto::kPublicKeyFileName;
  if (!fs::exists(keyFile, ec)) {
    ::chmod(directory.c_str(), 0700);  // ours: created above or already there
    SigningKey fresh;
    crypto_sign_keypair(fresh.public_.data(), fresh.secret_.data());
    // Written under a unique name and linked in place: link() fails if another process got there
    // first, whose key then wins (and is loaded below).
    const fs::path temp = directory / fmt::format(".driver.key.{}.{:08x}", ::getpid(), randombytes_random());
    ::unlink(temp.c_str());
    SABLE_TRY(writeNewFile(temp, fresh.secret_, 0600));
    const int linked = ::link(temp.c_str(), keyFile.c_str());
    const int linkError = errno;
    ::unlink(temp.c_str());
    sodium_memzero(fresh.secret_.data(), fresh.secret_.size());
    if (linked != 0 && linkError != EEXIST) {
      return hal::generalFailure("cannot create the signing key {}: {}", keyFile.string(), errnoText(linkError));
    }
  }
  SABLE_ASSIGN_OR_RETURN(auto secret, readSecretKey(keyFile));
  SigningKey key;
  key.secret_ = secret;
  sodium_memzero(secret.data(), secret.size());
  if (crypto_sign_ed25519_sk_to_pk(key.public_.data(), key.secret_.data()) != 0) {
    return hal::generalFailure("the signing key {} is not an Ed25519 key", keyFile.string());
  }
  // The public half, for the device server (rewritten when missing or stale).
  std::string ignored;  // unreadable or stale: rewritten
  auto existing = crypto::readPublicKey(publicFile, ignored);
  if (!existing || *existing != key.public_) {
    const fs::path temp = directory / fmt::format(".driver.pub.{}.{:08x}", ::getpid(), randombytes_random());
    ::unlink(temp.c_str());
    const std::string text = crypto::toHex(key.public_) + "\n";
    SABLE_TRY(writeNewFile(temp, std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()), 0644));
    if (::rename(temp.c_str(), publicFile.c_str()) != 0) {
      const int error = errno;
      ::unlink(temp.c_str());
      return hal::generalFailure("cannot write {}: {}", publicFile.string(), errnoText(error));
    }
  }
  return key;
}

hal::Result<const SigningKey*> SigningKey::processKey() {
  static std::mutex mutex;
  static std::optional<hal::Result<SigningKey>> loaded;
  std::lock_guard lock(mutex);
  if (!loaded) {
    std::string error;
    auto dir = crypto::defaultKeyDirectory(error);
    loaded = dir ? loadOrCreate(*dir) : hal::Result<SigningKey>(hal::generalFailure("{}", error));
  }
  if (!loaded->ok()) return loaded->error();
  return &loaded->value();
}

crypto::Signature SigningKey::sign(std::span<const uint8_t> message) const {
  crypto::Signature signature{};
  crypto_sign_detached(signature.data(), nullptr, message.data(), message.size(), secret_.data());
  return signature;
}

crypto::Signature SigningKey::signStream(std::span<const uint8_t> stream) const {
  const auto message = crypto::streamSignedMessage(crypto::sha256(stream));
  return sign(message);
}

Secret SigningKey::deriveSecret(std::string_view purpose, std::span<const uint8_t> context) const {
  // secret_ is libsodium's Ed25519 secret key: the 32-byte seed, then the public key.
  static_assert(crypto_generichash_KEYBYTES_MAX >= 32);
  Secret out{};
  crypto_generichash_state state;
  crypto_generichash_init(&state, secret_.data(), 32, out.size());
  crypto_generichash_update(&state, reinterpret_cast<const uint8_t*>(purpose.data()), purpose.size());
  const uint8_t separator = 0;
  crypto_generichash_update(&state, &separator, 1);
  crypto_generichash_update(&state, context.data(), context.size());
  crypto_generichash_final(&state, out.data(), out.size());
  sodium_memzero(&state, sizeof state);
  return out;
}

hal::Result<Tag> authenticate(const Secret& key, uint64_t nonce, std::span<const uint8_t> bytes) {
  std::array<uint8_t, 12> iv{};  // RFC 8439's 96-bit nonce: the 64-bit one, little-endian, then zeros
  for (int i = 0; i < 8; ++i) iv[i] = static_cast<uint8_t>(nonce >> (8 * i));
  // Fetched once: an implicit fetch at each initialisation looks the provider up again.
  static EVP_CIPHER* const cipher = EVP_CIPHER_fetch(nullptr, "ChaCha20-Poly1305", nullptr);
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> context(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  Tag tag{};
  int length = 0;
  bool ok = cipher != nullptr && context != nullptr &&
            EVP_EncryptInit_ex(context.get(), cipher, nullptr, key.data(), iv.data()) == 1;
  // The associated data in slices that fit an int.
  constexpr size_t kSlice = size_t{1} << 30;
  for (size_t done = 0; ok && done < bytes.size(); done += kSlice) {
    const size_t n = std::min(kSlice, bytes.size() - done);
    ok = EVP_EncryptUpdate(context.get(), nullptr, &length, bytes.data() + done, static_cast<int>(n)) == 1;
  }
  ok = ok && EVP_EncryptFinal_ex(context.get(), tag.data(), &length) == 1 &&
       EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_AEAD_GET_TAG, static_cast<int>(tag.size()), tag.data()) == 1;
  context.reset();
  OPENSSL_thread_stop();  // as in crypto::Sha256's destructor
  if (!ok) return hal::generalFailure("OpenSSL's ChaCha20-Poly1305 failed");
  return tag;
}

}  // namespace sable::umd
