/*
 * Ed25519 verification over the twisted Edwards curve -x^2 + y^2 = 1 + d x^2 y^2 modulo
 * p = 2^255 - 19 (RFC 8032). Written for clarity over speed: 16-bit limbs, schoolbook
 * multiplication, exponentiation by square-and-multiply, double-and-add scalar multiplication.
 * The curve constants are computed from their definitions rather than tabulated.
 */
#include "ed25519.h"

#include "sha512.h"

/* A field element: 16 signed limbs of 16 bits, value = sum of limb[i] * 2^(16 i). Limbs leave
 * [0, 2^16) between operations; carry() brings them back. Inputs of a multiplication have limbs
 * below 2^18 in magnitude, so every sum of products stays below 2^46: int64 keeps it exact. */
typedef int64_t fe[16];

struct point { /* extended coordinates: x = X/Z, y = Y/Z, x y = T/Z */
	fe x, y, z, t;
};

struct curve {
	fe d, d2, sqrt_m1;
	struct point base;
};

/* p - 2, (p - 5) / 8 and (p - 1) / 4, little-endian: the exponents of inversion, of the square
 * root candidate and of sqrt(-1). */
static const uint8_t exponent_inverse[32] = {0xeb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                             0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                             0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
static const uint8_t exponent_sqrt[32] = {0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                          0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                          0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f};
static const uint8_t exponent_sqrt_m1[32] = {0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                             0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                             0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f};
/* The group order L = 2^252 + 27742317777372353535851937790883648493, 32-bit words, little-endian. */
static const uint32_t order[8] = {0x5cf5d3edu, 0x5812631au, 0xa2f79cd6u, 0x14def9deu, 0, 0, 0, 0x10000000u};

static void fe_set(fe r, int64_t value) {
	r[0] = value;
	for (unsigned i = 1; i < 16; ++i) r[i] = 0;
}

static void fe_copy(fe r, const fe a) {
	for (unsigned i = 0; i < 16; ++i) r[i] = a[i];
}

static void fe_add(fe r, const fe a, const fe b) {
	for (unsigned i = 0; i < 16; ++i) r[i] = a[i] + b[i];
}

static void fe_sub(fe r, const fe a, const fe b) {
	for (unsigned i = 0; i < 16; ++i) r[i] = a[i] - b[i];
}

/* Moves each limb's excess into the next one; 2^256 = 38 (mod p) folds the top limb's into limb
 * 0. The right shift of a negative limb is arithmetic (floor division): GCC defines it so, and
 * the firmware is built with GCC only. */
static void fe_carry(fe a) {
	for (unsigned i = 0; i < 16; ++i) {
		const int64_t c = a[i] >> 16;
		a[i] -= c * 65536;
		if (i < 15) {
			a[i + 1] += c;
		} else {
			a[0] += 38 * c;
		}
	}
}

static void fe_mul(fe r, const fe a, const fe b) {
	int64_t t[31];
	for (unsigned i = 0; i < 31; ++i) t[i] = 0;
	for (unsigned i = 0; i < 16; ++i) {
		for (unsigned j = 0; j < 16; ++j) t[i + j] += a[i] * b[j];
	}
	for (unsigned i = 0; i < 15; ++i) t[i] += 38 * t[i + 16];
	for (unsigned i = 0; i < 16; ++i) r[i] = t[i];
	fe_carry(r);
	fe_carry(r);
}

static void fe_pow(fe r, const fe a, const uint8_t exponent[32]) {
	fe base, result;
	fe_copy(base, a);
	fe_set(result, 1);
	for (int bit = 255; bit >= 0; --bit) {
		fe_mul(result, result, result);
		if ((exponent[bit / 8] >> (bit % 8)) & 1) fe_mul(result, result, base);
	}
	fe_copy(r, result);
}

/* The canonical encoding: the value reduced below p, little-endian. */
static void fe_pack(uint8_t out[32], const fe a) {
	static const int64_t p[16] = {0xffed, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff,
	                              0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0x7fff};
	fe t;
	fe_copy(t, a);
	/* Four passes leave every limb in [0, 2^16): the value is then below 2^256 < 3p. */
	for (unsigned k = 0; k < 4; ++k) fe_carry(t);
	for (unsigned k = 0; k < 2; ++k) {
		fe m;
		int64_t borrow = 0;
		for (unsigned i = 0; i < 16; ++i) {
			m[i] = t[i] - p[i] - borrow;
			borrow = m[i] < 0;
			if (borrow) m[i] += 65536;
		}
		if (!borrow) fe_copy(t, m);
	}
	for (unsigned i = 0; i < 16; ++i) {
		out[2 * i] = (uint8_t)t[i];
		out[2 * i + 1] = (uint8_t)(t[i] >> 8);
	}
}

/* The 255 low bits of `in` (the top bit is the x sign of a point's encoding). */
static void fe_unpack(fe r, const uint8_t in[32]) {
	for (unsigned i = 0; i < 16; ++i) r[i] = in[2 * i] | (int64_t)in[2 * i + 1] << 8;
	r[15] &= 0x7fff;
}

static int bytes_equal(const uint8_t *a, const uint8_t *b, unsigned n) {
	unsigned difference = 0;
	for (unsigned i = 0; i < n; ++i) difference |= (unsigned)(a[i] ^ b[i]);
	return difference == 0;
}

static int fe_equal(const fe a, const fe b) {
	uint8_t x[32], y[32];
	fe_pack(x, a);
	fe_pack(y, b);
	return bytes_equal(x, y, 32);
}

static int fe_is_odd(const fe a) {
	uint8_t x[32];
	fe_pack(x, a);
	return x[0] & 1;
}

/* r = p + q, the unified addition of RFC 8032 5.1.4 (a = -1): also a doubling when p = q. */
static void point_add(struct point *r, const struct point *p, const struct point *q, const struct curve *curve) {
	fe a, b, c, d, e, f, g, h, s, u;
	fe_sub(s, p->y, p->x);
	fe_sub(u, q->y, q->x);
	fe_mul(a, s, u);
	fe_add(s, p->y, p->x);
	fe_add(u, q->y, q->x);
	fe_mul(b, s, u);
	fe_mul(c, p->t, q->t);
	fe_mul(c, c, curve->d2);
	fe_mul(d, p->z, q->z);
	fe_add(d, d, d);
	fe_sub(e, b, a);
	fe_sub(f, d, c);
	fe_add(g, d, c);
	fe_add(h, b, a);
	fe_mul(r->x, e, f);
	fe_mul(r->y, g, h);
	fe_mul(r->t, e, h);
	fe_mul(r->z, f, g);
}

static void point_identity(struct point *r) {
	fe_set(r->x, 0);
	fe_set(r->y, 1);
	fe_set(r->z, 1);
	fe_set(r->t, 0);
}

/* r = scalar * p, the scalar a little-endian 256-bit number. */
static void point_mul(struct point *r, const uint8_t scalar[32], const struct point *p, const struct curve *curve) {
	struct point q;
	point_identity(&q);
	for (int bit = 255; bit >= 0; --bit) {
		point_add(&q, &q, &q, curve);
		if ((scalar[bit / 8] >> (bit % 8)) & 1) point_add(&q, &q, p, curve);
	}
	*r = q;
}

static void point_encode(uint8_t out[32], const struct point *p) {
	fe inverse, x, y;
	fe_pow(inverse, p->z, exponent_inverse);
	fe_mul(x, p->x, inverse);
	fe_mul(y, p->y, inverse);
	fe_pack(out, y);
	out[31] ^= (uint8_t)(fe_is_odd(x) << 7);
}

/* RFC 8032 5.1.3: 0 when `in` is not the canonical encoding of a curve point. */
static int point_decode(struct point *r, const uint8_t in[32], const struct curve *curve) {
	fe y, y2, u, v, v3, x, check, one;
	uint8_t canonical[32];
	fe_unpack(y, in);
	fe_pack(canonical, y);
	if (!bytes_equal(canonical, in, 31) || canonical[31] != (in[31] & 0x7f)) return 0; /* y >= p */
	const int sign = in[31] >> 7;
	fe_set(one, 1);
	fe_mul(y2, y, y);
	fe_sub(u, y2, one);             /* u = y^2 - 1 */
	fe_mul(v, curve->d, y2);
	fe_add(v, v, one);              /* v = d y^2 + 1 */
	fe_mul(v3, v, v);
	fe_mul(v3, v3, v);              /* v^3 */
	fe_mul(x, v3, v3);
	fe_mul(x, x, v);
	fe_mul(x, x, u);                /* u v^7 */
	fe_pow(x, x, exponent_sqrt);
	fe_mul(x, x, v3);
	fe_mul(x, x, u);                /* x = u v^3 (u v^7)^((p-5)/8) */
	fe_mul(check, x, x);
	fe_mul(check, check, v);        /* v x^2 */
	if (!fe_equal(check, u)) {
		fe minus_u;
		fe_set(minus_u, 0);
		fe_sub(minus_u, minus_u, u);
		if (!fe_equal(check, minus_u)) return 0; /* no square root: not on the curve */
		fe_mul(x, x, curve->sqrt_m1);
	}
	fe zero;
	fe_set(zero, 0);
	if (fe_equal(x, zero) && sign) return 0;
	if (fe_is_odd(x) != sign) fe_sub(x, zero, x);
	fe_copy(r->x, x);
	fe_copy(r->y, y);
	fe_set(r->z, 1);
	fe_mul(r->t, x, y);
	return 1;
}

/* 8 p is the identity: p is of small order (the cofactor is 8). */
static int point_small_order(const struct point *p, const struct curve *curve) {
	struct point q = *p;
	for (unsigned i = 0; i < 3; ++i) point_add(&q, &q, &q, curve);
	fe zero;
	fe_set(zero, 0);
	return fe_equal(q.x, zero) && fe_equal(q.y, q.z);
}

static void curve_init(struct curve *curve) {
	fe numerator, denominator, two;
	fe_set(numerator, -121665);
	fe_set(denominator, 121666);
	fe_pow(denominator, denominator, exponent_inverse);
	fe_mul(curve->d, numerator, denominator); /* d = -121665 / 121666 */
	fe_add(curve->d2, curve->d, curve->d);
	fe_set(two, 2);
	fe_pow(curve->sqrt_m1, two, exponent_sqrt_m1); /* 2^((p-1)/4), a square root of -1 */
	/* The base point: y = 4/5, x even. */
	fe y;
	uint8_t encoding[32];
	fe_set(numerator, 4);
	fe_set(denominator, 5);
	fe_pow(denominator, denominator, exponent_inverse);
	fe_mul(y, numerator, denominator);
	fe_pack(encoding, y);
	(void)point_decode(&curve->base, encoding, curve);
}

/* The 512-bit little-endian number `in`, reduced mod L: shift in one bit at a time, subtract L
 * whenever the remainder reaches it (it stays below 2L < 2^254, so 8 words hold it). */
static void reduce_mod_order(uint8_t out[32], const uint8_t in[64]) {
	uint32_t r[8] = {0, 0, 0, 0, 0, 0, 0, 0};
	for (int bit = 511; bit >= 0; --bit) {
		for (int w = 7; w > 0; --w) r[w] = r[w] << 1 | r[w - 1] >> 31;
		r[0] = r[0] << 1 | ((in[bit / 8] >> (bit % 8)) & 1u);
		int at_least = 1; /* r >= L */
		for (int w = 7; w >= 0; --w) {
			if (r[w] != order[w]) {
				at_least = r[w] > order[w];
				break;
			}
		}
		if (at_least) {
			uint64_t borrow = 0;
			for (unsigned w = 0; w < 8; ++w) {
				const uint64_t difference = (uint64_t)r[w] - order[w] - borrow;
				r[w] = (uint32_t)difference;
				borrow = (difference >> 32) & 1u;
			}
		}
	}
	for (unsigned i = 0; i < 32; ++i) out[i] = (uint8_t)(r[i / 4] >> (8 * (i % 4)));
}

static int scalar_below_order(const uint8_t s[32]) {
	for (int w = 7; w >= 0; --w) {
		const uint32_t word = (uint32_t)s[4 * w] | (uint32_t)s[4 * w + 1] << 8 | (uint32_t)s[4 * w + 2] << 16 |
		                      (uint32_t)s[4 * w + 3] << 24;
		if (word != order[w]) return word < order[w];
	}
	return 0; /* s = L */
}

int sable_ed25519_verify(const uint8_t signature[64], const uint8_t *message, size_t length,
                         const uint8_t public_key[32]) {
	const uint8_t *r_encoding = signature;
	const uint8_t *s = signature + 32;
	if (!scalar_below_order(s)) return 0;
	struct curve curve;
	curve_init(&curve);
	struct point a, r;
	if (!point_decode(&a, public_key, &curve) || point_small_order(&a, &curve)) return 0;
	if (point_decode(&r, r_encoding, &curve) && point_small_order(&r, &curve)) return 0;
	/* k = SHA-512(R || A || message) mod L */
	uint8_t digest[64], k[32];
	struct sable_sha512 hash;
	sable_sha512_init(&hash);
	sable_sha512_update(&hash, r_encoding, 32);
	sable_sha512_update(&hash, public_key, 32);
	sable_sha512_update(&hash, message, length);
	sable_sha512_final(&hash, digest);
	reduce_mod_order(k, digest);
	/* [s]B - [k]A must encode as R. */
	fe zero;
	fe_set(zero, 0);
	fe_sub(a.x, zero, a.x);
	fe_sub(a.t, zero, a.t);
	struct point sb, ka;
	point_mul(&sb, s, &curve.base, &curve);
	point_mul(&ka, k, &a, &curve);
	point_add(&sb, &sb, &ka, &curve);
	uint8_t encoding[32];
	point_encode(encoding, &sb);
	return bytes_equal(encoding, r_encoding, 32);
}
