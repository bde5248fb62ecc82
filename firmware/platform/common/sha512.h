/*
 * SHA-512 (FIPS 180-4) in freestanding C, for Ed25519 (ed25519.h). Checked against libsodium on
 * the host (tests/firmware/platform_test.cc).
 */
#ifndef SABLE_PLATFORM_SHA512_H
#define SABLE_PLATFORM_SHA512_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sable_sha512 {
	uint64_t state[8];
	uint64_t bytes;      /* total length so far (messages below 2^61 bytes) */
	uint8_t block[128];  /* partial block: bytes % 128 of them are valid */
};

void sable_sha512_init(struct sable_sha512 *hash);
void sable_sha512_update(struct sable_sha512 *hash, const uint8_t *data, size_t length);
void sable_sha512_final(struct sable_sha512 *hash, uint8_t digest[64]);

#ifdef __cplusplus
}
#endif

#endif /* SABLE_PLATFORM_SHA512_H */
