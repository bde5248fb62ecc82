// A test double of the few libsodium calls tests/firmware makes, for the 32-bit ARM build
// (tests/firmware/armhf), which has no armhf libsodium (no dpkg multiarch). SHA-256 is the
// platform layer's (checked against libsodium by firmware_platform_test on the host). A
// "signature" is a keyed hash, SHA-256(key ‖ message) ‖ SHA-256(message ‖ key), with the public
// key as the key: it is not Ed25519 and proves nothing about Ed25519, but a different message or
// a different key's signature fails as a real one does, which is all the firmware's tests need
// of it (they test the firmware's flow: hash, message, verify, verdict). The platform layer's own
// Ed25519 runs on 32 bits against RFC 8032's vectors; the comparisons with libsodium
// (`*Libsodium*` tests) run on the host only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "sha256.h"
#include "sha512.h"

#define crypto_sign_PUBLICKEYBYTES 32U
#define crypto_sign_SECRETKEYBYTES 64U
#define crypto_sign_BYTES 64U
#define crypto_hash_sha256_BYTES 32U

inline int sodium_init() { return 0; }

inline int crypto_hash_sha256(unsigned char* out, const unsigned char* in, unsigned long long length) {
  sable_sha256 hash;
  sable_sha256_init(&hash);
  sable_sha256_update(&hash, in, static_cast<size_t>(length));
  sable_sha256_final(&hash, out);
  return 0;
}

inline int crypto_hash_sha512(unsigned char* out, const unsigned char* in, unsigned long long length) {
  sable_sha512 hash;
  sable_sha512_init(&hash);
  sable_sha512_update(&hash, in, static_cast<size_t>(length));
  sable_sha512_final(&hash, out);
  return 0;
}

// Distinct keys, one per call: the key is the hash of a counter.
inline int crypto_sign_keypair(unsigned char* pk, unsigned char* sk) {
  static uint32_t next = 0;
  const uint32_t n = ++next;
  unsigned char seed[4] = {static_cast<unsigned char>(n), static_cast<unsigned char>(n >> 8),
                           static_cast<unsigned char>(n >> 16), static_cast<unsigned char>(n >> 24)};
  crypto_hash_sha256(pk, seed, sizeof seed);
  std::memcpy(sk, pk, 32);
  std::memcpy(sk + 32, pk, 32);
  return 0;
}

inline void sable_double_signature(unsigned char* sig, const unsigned char* m, unsigned long long mlen,
                                   const unsigned char* key) {
  sable_sha256 hash;
  sable_sha256_init(&hash);
  sable_sha256_update(&hash, key, 32);
  sable_sha256_update(&hash, m, static_cast<size_t>(mlen));
  sable_sha256_final(&hash, sig);
  sable_sha256_init(&hash);
  sable_sha256_update(&hash, m, static_cast<size_t>(mlen));
  sable_sha256_update(&hash, key, 32);
  sable_sha256_final(&hash, sig + 32);
}

inline int crypto_sign_detached(unsigned char* sig, unsigned long long* siglen, const unsigned char* m,
                                unsigned long long mlen, const unsigned char* sk) {
  sable_double_signature(sig, m, mlen, sk);
  if (siglen != nullptr) *siglen = 64;
  return 0;
}

inline int crypto_sign_verify_detached(const unsigned char* sig, const unsigned char* m, unsigned long long mlen,
                                       const unsigned char* pk) {
  unsigned char expected[64];
  sable_double_signature(expected, m, mlen, pk);
  return std::memcmp(expected, sig, 64) == 0 ? 0 : -1;
}
