/*
 * The three functions a freestanding C compiler may call on its own (C11 4.6 leaves them to the
 * environment; gcc emits memcpy for a structure copy even with -fno-builtin). Byte loops: the
 * copies it makes are small structures, and the file is built with
 * -fno-tree-loop-distribute-patterns so these loops are not turned back into calls to themselves.
 */
#include <stddef.h>

void *memcpy(void *restrict destination, const void *restrict source, size_t count);
void *memmove(void *destination, const void *source, size_t count);
void *memset(void *destination, int value, size_t count);

void *memcpy(void *restrict destination, const void *restrict source, size_t count) {
	unsigned char *d = destination;
	const unsigned char *s = source;
	for (size_t i = 0; i < count; ++i) d[i] = s[i];
	return destination;
}

void *memmove(void *destination, const void *source, size_t count) {
	unsigned char *d = destination;
	const unsigned char *s = source;
	if (d < s) {
		for (size_t i = 0; i < count; ++i) d[i] = s[i];
	} else {
		for (size_t i = count; i > 0; --i) d[i - 1] = s[i - 1];
	}
	return destination;
}

void *memset(void *destination, int value, size_t count) {
	unsigned char *d = destination;
	for (size_t i = 0; i < count; ++i) d[i] = (unsigned char)value;
	return destination;
}
