// SPDX-License-Identifier: GPL-2.0 OR MIT
#include "text.h"

void sable_text_init(struct sable_text *text, char *buffer, uint32_t capacity)
{
	uint32_t i;

	text->buffer = buffer;
	text->capacity = capacity;
	text->length = 0;
	for (i = 0; i < capacity; ++i)
		buffer[i] = '\0';
}

static void sable_text_put(struct sable_text *text, char c)
{
	/* Truncates silently: the last byte stays NUL. */
	if (text->length + 1 < text->capacity)
		text->buffer[text->length++] = c;
}

void sable_text_add(struct sable_text *text, const char *string)
{
	while (*string != '\0')
		sable_text_put(text, *string++);
}

void sable_text_add_u32(struct sable_text *text, uint32_t value)
{
	char digits[10];
	uint32_t count = 0;

	do {
		digits[count++] = (char)('0' + value % 10u);
		value /= 10u;
	} while (value != 0);
	while (count > 0)
		sable_text_put(text, digits[--count]);
}

void sable_text_add_hex(struct sable_text *text, uint32_t value)
{
	static const char hex[] = "0123456789ABCDEF";
	int shift;

	sable_text_add(text, "0x");
	for (shift = 28; shift >= 0; shift -= 4)
		sable_text_put(text, hex[(value >> shift) & 0xFu]);
}

void sable_text_add_version(struct sable_text *text, uint32_t version)
{
	sable_text_add_u32(text, version >> 16);
	sable_text_put(text, '.');
	sable_text_add_u32(text, version & 0xFFFFu);
}
