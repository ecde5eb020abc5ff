// SPDX-License-Identifier: MIT
/*
 * fmt.c - printf-style formatting of rtprobe's own (see fmt.h).
 *
 * Doubles are converted exactly, with integer arithmetic only (the same
 * digits on soft-float boards).  A finite double is m * 2^e with an integer
 * m < 2^53.  For e >= 0 that is the integer N = m * 2^e; for e < 0 it is
 * m * 5^-e / 10^-e, the integer N = m * 5^-e with the decimal point -e places
 * from its right.  N is built in limbs of base 10^9, so its decimal digits
 * are the limbs written out in turn (at most 767 digits: 2^53 * 5^1074).
 * The digits are then cut where the conversion stops and rounded to nearest,
 * ties to even, which is what glibc and musl do in the default rounding mode.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fmt.h"

#define LIMB_BASE 1000000000u
#define LIMB_DIGITS 9
#define LIMBS 90                 /* 810 digits > the 767 a double can need */
#define FMT_MAX_PREC 64          /* longer precisions of f e g are cut to this */
#define FMT_BODY (310 + 2 + FMT_MAX_PREC + 8)

/* Where formatted text goes: a buffer (snprintf) or a stream through a chunk. */
struct fmt_out {
	char *buf;      /* snprintf: the destination; fprintf: the chunk */
	size_t size;    /* its size */
	FILE *f;        /* fprintf: the stream; NULL for snprintf */
	size_t used;    /* fprintf: characters waiting in the chunk */
	size_t total;   /* characters produced so far */
	bool failed;    /* a write to f failed */
};

/* One conversion specification: %[flags][width][.precision][length]conv. */
struct fmt_spec {
	bool left, zero, plus, space, alt;
	size_t width;
	int prec;       /* -1: none given */
	int length;     /* -2 hh, -1 h, 0 none, 1 l, 2 ll/j, 3 z/t */
	char conv;
};

/* The exact decimal value of a non-negative double: digit[0..len) * 10^... */
struct decimal {
	char digit[LIMBS * LIMB_DIGITS];
	int len;        /* significant digits, no trailing zeros; 0 for zero */
	int exp10;      /* power of ten of digit[0] */
};

/* Hand the chunk to the stream. */
static void out_flush(struct fmt_out *o)
{
	if (o->used && fwrite(o->buf, 1, o->used, o->f) != o->used)
		o->failed = true;
	o->used = 0;
}

/* Append n characters of text, or n copies of text[0] when repeat. */
static void out_put(struct fmt_out *o, const char *text, size_t n, bool repeat)
{
	for (size_t i = 0; i < n; i++) {
		char c = repeat ? text[0] : text[i];

		if (o->f) {
			if (o->used == o->size)
				out_flush(o);
			o->buf[o->used++] = c;
		} else if (o->total + 1 < o->size) {
			o->buf[o->total] = c;
		}
		o->total++;
	}
}

/* Write prefix, zeros and body, padded to the width (with 0s after the prefix when zero_pad). */
static void out_field(struct fmt_out *o, const struct fmt_spec *sp,
		      const char *prefix, size_t zeros, const char *body,
		      size_t len, bool zero_pad)
{
	size_t prefix_len = strlen(prefix);
	size_t used = prefix_len + zeros + len;
	size_t pad = sp->width > used ? sp->width - used : 0;

	zero_pad = zero_pad && sp->zero && !sp->left;
	if (!sp->left && !zero_pad)
		out_put(o, " ", pad, true);
	out_put(o, prefix, prefix_len, false);
	if (zero_pad)
		out_put(o, "0", pad, true);
	out_put(o, "0", zeros, true);
	out_put(o, body, len, false);
	if (sp->left)
		out_put(o, " ", pad, true);
}

/* Write an integer: value's digits in base 10 or 16 after the sign or 0x prefix. */
static void fmt_integer(struct fmt_out *o, const struct fmt_spec *sp,
			unsigned long long value, bool negative)
{
	const char *set = sp->conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
	unsigned base = (sp->conv == 'x' || sp->conv == 'X' || sp->conv == 'p') ? 16 : 10;
	char digits[24];
	size_t n = 0;
	const char *prefix = "";

	do {
		digits[sizeof(digits) - 1 - n++] = set[value % base];
		value /= base;
	} while (value);
	if (sp->prec == 0 && n == 1 && digits[sizeof(digits) - 1] == '0')
		n = 0;          /* "%.0d" of 0 writes no digit */
	if (negative)
		prefix = "-";
	else if (sp->conv == 'd' || sp->conv == 'i')
		prefix = sp->plus ? "+" : sp->space ? " " : "";
	else if (sp->conv == 'p')
		prefix = "0x";
	out_field(o, sp, prefix,
		  sp->prec > (int)n ? (size_t)sp->prec - n : 0,
		  digits + sizeof(digits) - n, n, sp->prec < 0);
}

/* Multiply the limbs (least significant first, n of them) by k < 2^29; the new count. */
static int limbs_mul(uint32_t *limb, int n, uint32_t k)
{
	uint64_t carry = 0;

	for (int i = 0; i < n; i++) {
		uint64_t x = (uint64_t)limb[i] * k + carry;

		limb[i] = (uint32_t)(x % LIMB_BASE);
		carry = x / LIMB_BASE;
	}
	while (carry) {
		limb[n++] = (uint32_t)(carry % LIMB_BASE);
		carry /= LIMB_BASE;
	}
	return n;
}

/* The exact decimal digits of the finite double with these bits (sign ignored). */
static void decimal_of(uint64_t bits, struct decimal *d)
{
	int biased = (int)(bits >> 52) & 0x7ff;
	uint64_t m = bits & ((1ULL << 52) - 1);
	int e = biased ? biased - 1075 : -1074;
	uint32_t limb[LIMBS];
	int n = 0, scale = 0, total = 0;

	if (biased)
		m |= 1ULL << 52;
	d->len = 0;
	d->exp10 = 0;
	if (!m)
		return;
	while (m) {
		limb[n++] = (uint32_t)(m % LIMB_BASE);
		m /= LIMB_BASE;
	}
	if (e >= 0) {
		for (int left = e; left > 0; left -= 28)
			n = limbs_mul(limb, n, 1u << (left < 28 ? left : 28));
	} else {
		scale = -e;
		for (int left = scale; left > 0; left -= 12) {
			uint32_t k = 1;

			for (int i = 0; i < (left < 12 ? left : 12); i++)
				k *= 5;
			n = limbs_mul(limb, n, k);
		}
	}
	for (int i = n - 1; i >= 0; i--) {
		char nine[LIMB_DIGITS];
		uint32_t v = limb[i];
		int from = 0;

		for (int k = LIMB_DIGITS - 1; k >= 0; k--) {
			nine[k] = (char)('0' + v % 10);
			v /= 10;
		}
		while (i == n - 1 && from < LIMB_DIGITS - 1 && nine[from] == '0')
			from++;
		memcpy(d->digit + total, nine + from, (size_t)(LIMB_DIGITS - from));
		total += LIMB_DIGITS - from;
	}
	d->len = total;
	while (d->len && d->digit[d->len - 1] == '0')
		d->len--;
	d->exp10 = total - 1 - scale;
}

/*
 * Keep the first keep digits of d (keep may be 0 or less: the cut lies above
 * the leading digit), rounded to nearest, ties to even.
 */
static void decimal_round(struct decimal *d, int keep)
{
	bool up;
	int i;

	if (keep >= d->len)
		return;
	if (keep < 0) {         /* what is cut off is below half a unit */
		d->len = 0;
		return;
	}
	if (d->digit[keep] != '5')
		up = d->digit[keep] > '5';
	else if (keep + 1 < d->len)
		up = true;      /* more than half: there are no trailing zeros */
	else
		up = keep > 0 && ((d->digit[keep - 1] - '0') & 1);
	d->len = keep;
	if (!up) {
		while (d->len && d->digit[d->len - 1] == '0')
			d->len--;
		return;
	}
	for (i = keep - 1; i >= 0 && d->digit[i] == '9'; i--)
		;
	if (i < 0) {            /* 99..9 became 100..0 */
		d->digit[0] = '1';
		d->len = 1;
		d->exp10++;
	} else {
		d->digit[i]++;
		d->len = i + 1;
	}
}

/* The digit of d at the power of ten pos. */
static char decimal_digit(const struct decimal *d, int pos)
{
	int index = d->exp10 - pos;

	return index >= 0 && index < d->len ? d->digit[index] : '0';
}

/* Write d as %f does with prec decimals (d already rounded there). */
static size_t put_fixed(char *out, const struct decimal *d, int prec, bool alt)
{
	int top = d->len && d->exp10 > 0 ? d->exp10 : 0;
	size_t n = 0;

	for (int pos = top; pos >= 0; pos--)
		out[n++] = decimal_digit(d, pos);
	if (prec || alt)
		out[n++] = '.';
	for (int pos = -1; pos >= -prec; pos--)
		out[n++] = decimal_digit(d, pos);
	return n;
}

/* Write d as %e does with prec decimals (d already rounded there). */
static size_t put_exponent(char *out, const struct decimal *d, int prec,
			   bool alt, bool upper)
{
	int exp10 = d->len ? d->exp10 : 0;
	unsigned magnitude = (unsigned)(exp10 < 0 ? -exp10 : exp10);
	char digits[4];
	size_t n = 0, k = 0;

	out[n++] = d->len ? d->digit[0] : '0';
	if (prec || alt)
		out[n++] = '.';
	for (int i = 1; i <= prec; i++)
		out[n++] = i < d->len ? d->digit[i] : '0';
	out[n++] = upper ? 'E' : 'e';
	out[n++] = exp10 < 0 ? '-' : '+';
	do {
		digits[k++] = (char)('0' + magnitude % 10);
		magnitude /= 10;
	} while (magnitude);
	if (k < 2)
		digits[k++] = '0';
	while (k)
		out[n++] = digits[--k];
	return n;
}

/* Drop the trailing zeros of the fraction (and a bare point), as %g does; the new length. */
static size_t strip_fraction_zeros(char *body, size_t n)
{
	size_t exp_at = 0, end;
	char *dot;

	while (exp_at < n && body[exp_at] != 'e' && body[exp_at] != 'E')
		exp_at++;
	dot = memchr(body, '.', exp_at);
	if (!dot)
		return n;
	end = exp_at;
	while (end > (size_t)(dot - body) + 1 && body[end - 1] == '0')
		end--;
	if (end == (size_t)(dot - body) + 1)
		end--;
	memmove(body + end, body + exp_at, n - exp_at);
	return end + n - exp_at;
}

/* Write a double for the conversion f, e or g (either case). */
static void fmt_double(struct fmt_out *o, const struct fmt_spec *sp, double value)
{
	bool upper = sp->conv >= 'A' && sp->conv <= 'Z';
	char conv = (char)(sp->conv | 0x20);
	int prec = sp->prec < 0 ? 6 : sp->prec > FMT_MAX_PREC ? FMT_MAX_PREC : sp->prec;
	bool strip = false;
	const char *sign;
	struct decimal d;
	char body[FMT_BODY];
	uint64_t bits;
	size_t n;

	memcpy(&bits, &value, sizeof(bits));
	sign = bits >> 63 ? "-" : sp->plus ? "+" : sp->space ? " " : "";
	if (((bits >> 52) & 0x7ff) == 0x7ff) {
		bool nan = bits & ((1ULL << 52) - 1);

		out_field(o, sp, sign, 0,
			  nan ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf"), 3, false);
		return;
	}
	decimal_of(bits, &d);
	if (conv == 'g') {
		int exp10;

		prec = prec ? prec : 1;
		decimal_round(&d, prec);
		exp10 = d.len ? d.exp10 : 0;
		strip = !sp->alt;
		if (exp10 >= -4 && exp10 < prec) {
			conv = 'f';
			prec = prec - 1 - exp10;
		} else {
			conv = 'e';
			prec--;
		}
	}
	if (conv == 'f') {
		if (d.len)
			decimal_round(&d, d.exp10 + 1 + prec);
		n = put_fixed(body, &d, prec, sp->alt);
	} else {
		decimal_round(&d, prec + 1);
		n = put_exponent(body, &d, prec, sp->alt, upper);
	}
	if (strip)
		n = strip_fraction_zeros(body, n);
	out_field(o, sp, sign, 0, body, n, true);
}

/* The signed integer argument of the given length. */
static long long arg_signed(va_list *ap, int length)
{
	if (length == 2)
		return va_arg(*ap, long long);
	if (length == 1 || length == 3)
		return va_arg(*ap, long);
	if (length == -1)
		return (short)va_arg(*ap, int);
	if (length == -2)
		return (signed char)va_arg(*ap, int);
	return va_arg(*ap, int);
}

/* The unsigned integer argument of the given length. */
static unsigned long long arg_unsigned(va_list *ap, int length)
{
	if (length == 2)
		return va_arg(*ap, unsigned long long);
	if (length == 1 || length == 3)
		return va_arg(*ap, unsigned long);
	if (length == -1)
		return (unsigned short)va_arg(*ap, unsigned int);
	if (length == -2)
		return (unsigned char)va_arg(*ap, unsigned int);
	return va_arg(*ap, unsigned int);
}

/* Parse the specification after a '%' at *p; *p moves past it. */
static void parse_spec(const char **p, va_list *ap, struct fmt_spec *sp)
{
	const char *s = *p;

	memset(sp, 0, sizeof(*sp));
	sp->prec = -1;
	for (;; s++) {
		if (*s == '-')
			sp->left = true;
		else if (*s == '0')
			sp->zero = true;
		else if (*s == '+')
			sp->plus = true;
		else if (*s == ' ')
			sp->space = true;
		else if (*s == '#')
			sp->alt = true;
		else
			break;
	}
	if (*s == '*') {
		int width = va_arg(*ap, int);

		sp->left = sp->left || width < 0;
		sp->width = width < 0 ? 0u - (size_t)width : (size_t)width;
		s++;
	}
	while (*s >= '0' && *s <= '9')
		sp->width = sp->width * 10 + (size_t)(*s++ - '0');
	if (*s == '.') {
		s++;
		sp->prec = 0;
		if (*s == '*') {
			int prec = va_arg(*ap, int);

			sp->prec = prec < 0 ? -1 : prec;
			s++;
		}
		while (*s >= '0' && *s <= '9')
			sp->prec = sp->prec * 10 + (*s++ - '0');
	}
	for (;; s++) {
		if (*s == 'h')
			sp->length--;
		else if (*s == 'l' || *s == 'j')
			sp->length += *s == 'j' ? 2 : 1;
		else if (*s == 'z' || *s == 't')
			sp->length = 3;
		else
			break;
	}
	sp->conv = *s;
	*p = *s ? s + 1 : s;
}

/* Format into o: the text of format with its conversions filled from ap. */
static void fmt_run(struct fmt_out *o, const char *format, va_list *ap)
{
	const char *p = format;
	struct fmt_spec sp;

	while (*p) {
		const char *pct = strchr(p, '%');

		if (!pct) {
			out_put(o, p, strlen(p), false);
			return;
		}
		out_put(o, p, (size_t)(pct - p), false);
		p = pct + 1;
		parse_spec(&p, ap, &sp);
		switch (sp.conv) {
		case 'd':
		case 'i': {
			long long v = arg_signed(ap, sp.length);

			fmt_integer(o, &sp, v < 0 ? 0ULL - (unsigned long long)v :
				    (unsigned long long)v, v < 0);
			break;
		}
		case 'u':
		case 'x':
		case 'X':
			fmt_integer(o, &sp, arg_unsigned(ap, sp.length), false);
			break;
		case 'p':
			sp.prec = -1;
			fmt_integer(o, &sp, (uintptr_t)va_arg(*ap, void *), false);
			break;
		case 'c': {
			char c = (char)va_arg(*ap, int);

			out_field(o, &sp, "", 0, &c, 1, false);
			break;
		}
		case 's': {
			const char *s = va_arg(*ap, const char *);

			s = s ? s : "(null)";
			out_field(o, &sp, "", 0, s,
				  sp.prec < 0 ? strlen(s) : strnlen(s, (size_t)sp.prec), false);
			break;
		}
		case 'f':
		case 'F':
		case 'e':
		case 'E':
		case 'g':
		case 'G':
			fmt_double(o, &sp, va_arg(*ap, double));
			break;
		case '%':
			out_put(o, "%", 1, false);
			break;
		default:        /* not one of ours: written as it stands */
			out_put(o, pct, (size_t)(p - pct), false);
			break;
		}
	}
}

int fmt_vsnprintf(char *buf, size_t size, const char *format, va_list ap)
{
	struct fmt_out o = { .buf = buf, .size = size };
	va_list args;

	va_copy(args, ap);
	fmt_run(&o, format, &args);
	va_end(args);
	if (size)
		buf[o.total < size ? o.total : size - 1] = '\0';
	return (int)o.total;
}

int fmt_snprintf(char *buf, size_t size, const char *format, ...)
{
	va_list ap;
	int n;

	va_start(ap, format);
	n = fmt_vsnprintf(buf, size, format, ap);
	va_end(ap);
	return n;
}

int fmt_vfprintf(FILE *f, const char *format, va_list ap)
{
	char chunk[256];
	struct fmt_out o = { .buf = chunk, .size = sizeof(chunk), .f = f };
	va_list args;

	/* one message stays whole between threads, as with the C library's vfprintf */
	flockfile(f);
	va_copy(args, ap);
	fmt_run(&o, format, &args);
	va_end(args);
	out_flush(&o);
	funlockfile(f);
	return o.failed ? -1 : (int)o.total;
}

int fmt_fprintf(FILE *f, const char *format, ...)
{
	va_list ap;
	int n;

	va_start(ap, format);
	n = fmt_vfprintf(f, format, ap);
	va_end(ap);
	return n;
}

int fmt_printf(const char *format, ...)
{
	va_list ap;
	int n;

	va_start(ap, format);
	n = fmt_vfprintf(stdout, format, ap);
	va_end(ap);
	return n;
}
