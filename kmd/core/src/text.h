/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* A bounded, always NUL-terminated text builder: kmd/core formats messages without libc. */
#ifndef SABLE_KMD_CORE_TEXT_H
#define SABLE_KMD_CORE_TEXT_H

#include "sable/kmd/compat.h"

struct sable_text {
	char *buffer;
	uint32_t capacity; /* bytes of buffer, NUL included; > 0 */
	uint32_t length;
};

void sable_text_init(struct sable_text *text, char *buffer, uint32_t capacity);
void sable_text_add(struct sable_text *text, const char *string);
void sable_text_add_u32(struct sable_text *text, uint32_t value);
void sable_text_add_hex(struct sable_text *text, uint32_t value); /* 0x%08X */
void sable_text_add_version(struct sable_text *text, uint32_t version); /* major.minor */

#endif /* SABLE_KMD_CORE_TEXT_H */
