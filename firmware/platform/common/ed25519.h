/*
 * Ed25519 signature verification (RFC 8032, section 5.1.7) in freestanding C: the signature
 * service of a control core without a crypto engine that does Ed25519. Verification only, on
 * public data, so nothing here needs to run in constant time. Checked against libsodium on the
 * host (tests/firmware/platform_test.cc).
 */
#ifndef SABLE_PLATFORM_ED25519_H
#define SABLE_PLATFORM_ED25519_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when `signature` is the Ed25519 signature of the `length` bytes at `message` by
 * `public_key`, else 0. As libsodium's crypto_sign_verify_detached, it refuses a non-canonical
 * S (S >= L), a non-canonical or undecodable public key, a public key or an R of small order. */
int sable_ed25519_verify(const uint8_t signature[64], const uint8_t *message, size_t length,
                         const uint8_t public_key[32]);

#ifdef __cplusplus
}
#endif

#endif /* SABLE_PLATFORM_ED25519_H */
