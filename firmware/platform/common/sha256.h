/*
 * SHA-256 (FIPS 180-4) in freestanding C: the hash engine of a control core without a crypto
 * block (sable_fw_platform.digest_sha256). Checked against libsodium on the host
 * (tests/firmware/platform_test.cc).
 */
#ifndef SABLE_PLATFORM_SHA256_H
#define SABLE_PLATFORM_SHA256_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sable_sha256 {
	uint32_t state[8];
	uint64_t bytes;     /* total length so far */
	uint8_t block[64];  /* partial block: bytes % 64 of them are valid */
};

void sable_sha256_init(struct sable_sha256 *hash);
void sable_sha256_update(struct sable_sha256 *hash, const uint8_t *data, size_t length);
void sable_sha256_final(struct sable_sha256 *hash, uint8_t digest[32]);

#ifdef __cplusplus
}
#endif

#endif /* SABLE_PLATFORM_SHA256_H */
