// SPDX-License-Identifier: MIT
/*
 * armv5_atomics.c - the __sync_* helpers an ARMv5 build calls for atomics.
 *
 * ARMv5TE has no exclusive load/store, so the compiler turns every atomic
 * operation into a call.  Zig's compiler-rt does not provide them for ARM
 * (libgcc does, the same way): they are built here on the kernel's user
 * helpers, code the Linux kernel maps at the top of every ARM process
 * (Documentation/arch/arm/kernel_user_helpers.rst): __kuser_cmpxchg (32 bit),
 * __kuser_cmpxchg64 (64 bit, Linux 3.1 and later) and __kuser_memory_barrier.
 * Bytes and halfwords are updated through their aligned 32-bit word.
 *
 * Linked only into the armel probe (rtbench/probebuild.py); never into a
 * build for a CPU that has its own atomic instructions.
 */
#include <stdint.h>

#define KUSER_CMPXCHG ((int (*)(uint32_t, uint32_t, volatile uint32_t *))0xffff0fc0)
#define KUSER_BARRIER ((void (*)(void))0xffff0fa0)
#define KUSER_CMPXCHG64 \
	((int (*)(const uint64_t *, const uint64_t *, volatile uint64_t *))0xffff0f60)

/* Compare-and-swap of an aligned word; returns the value seen before. */
static uint32_t cas32(volatile uint32_t *p, uint32_t expected, uint32_t desired)
{
	uint32_t seen;

	do {
		seen = *p;
		if (seen != expected)
			return seen;
	} while (KUSER_CMPXCHG(expected, desired, p));
	return expected;
}

/* Compare-and-swap of a 64-bit value; returns the value seen before. */
static uint64_t cas64(volatile uint64_t *p, uint64_t expected, uint64_t desired)
{
	uint64_t seen;

	for (;;) {
		seen = *p;	/* two loads: may be torn, so confirmed below */
		if (seen == expected) {
			if (!KUSER_CMPXCHG64(&expected, &desired, p))
				return expected;
		} else if (!KUSER_CMPXCHG64(&seen, &seen, p)) {
			return seen;
		}
	}
}

/* Compare-and-swap of a byte or halfword inside its aligned word. */
static uint32_t cas_narrow(volatile void *ptr, unsigned int size, uint32_t expected,
			   uint32_t desired)
{
	uintptr_t addr = (uintptr_t)ptr;
	volatile uint32_t *word = (volatile uint32_t *)(addr & ~(uintptr_t)3);
	unsigned int shift = (unsigned int)(addr & 3) * 8;
	uint32_t mask = (size == 1 ? 0xffu : 0xffffu) << shift;
	uint32_t old, now, seen;

	for (;;) {
		old = *word;
		seen = (old & mask) >> shift;
		if (seen != expected)
			return seen;
		now = (old & ~mask) | ((desired << shift) & mask);
		if (cas32(word, old, now) == old)
			return expected;
	}
}

/*
 * Clang will not let C define functions with the builtins' names, so each is
 * defined under an rtb_ name and given the builtin's symbol with an asm label.
 */
void rtb_sync_synchronize(void) __asm__("__sync_synchronize");
void rtb_sync_synchronize(void)
{
	KUSER_BARRIER();
}

/* The value-returning compare-and-swap and the read-modify-write family. */
#define SYNC_CAS(N, T, CAS)						\
	T rtb_val_cas_##N(volatile void *p, T e, T d)			\
		__asm__("__sync_val_compare_and_swap_" #N);		\
	T rtb_val_cas_##N(volatile void *p, T e, T d)			\
	{ return (T)CAS; }						\
	_Bool rtb_bool_cas_##N(volatile void *p, T e, T d)		\
		__asm__("__sync_bool_compare_and_swap_" #N);		\
	_Bool rtb_bool_cas_##N(volatile void *p, T e, T d)		\
	{ return rtb_val_cas_##N(p, e, d) == e; }

#define SYNC_RMW(N, T, NAME, EXPR)					\
	T rtb_fetch_and_##NAME##_##N(volatile void *p, T v)		\
		__asm__("__sync_fetch_and_" #NAME "_" #N);		\
	T rtb_fetch_and_##NAME##_##N(volatile void *p, T v)		\
	{								\
		T old;							\
		do {							\
			old = *(volatile T *)p;				\
		} while (rtb_val_cas_##N(p, old, (T)(EXPR)) != old);	\
		return old;						\
	}								\
	T rtb_##NAME##_and_fetch_##N(volatile void *p, T v)		\
		__asm__("__sync_" #NAME "_and_fetch_" #N);		\
	T rtb_##NAME##_and_fetch_##N(volatile void *p, T v)		\
	{								\
		T old = rtb_fetch_and_##NAME##_##N(p, v);		\
		return (T)(EXPR);					\
	}

#define SYNC_ALL(N, T)							\
	SYNC_RMW(N, T, add, old + v)					\
	SYNC_RMW(N, T, sub, old - v)					\
	SYNC_RMW(N, T, or, old | v)					\
	SYNC_RMW(N, T, and, old & v)					\
	SYNC_RMW(N, T, xor, old ^ v)					\
	SYNC_RMW(N, T, nand, ~(old & v))				\
	T rtb_lock_test_and_set_##N(volatile void *p, T v)		\
		__asm__("__sync_lock_test_and_set_" #N);		\
	T rtb_lock_test_and_set_##N(volatile void *p, T v)		\
	{								\
		T old;							\
		do {							\
			old = *(volatile T *)p;				\
		} while (rtb_val_cas_##N(p, old, v) != old);		\
		return old;						\
	}								\
	void rtb_lock_release_##N(volatile void *p)			\
		__asm__("__sync_lock_release_" #N);			\
	void rtb_lock_release_##N(volatile void *p)			\
	{								\
		KUSER_BARRIER();					\
		*(volatile T *)p = 0;					\
	}

SYNC_CAS(1, uint8_t, cas_narrow(p, 1, e, d))
SYNC_CAS(2, uint16_t, cas_narrow(p, 2, e, d))
SYNC_CAS(4, uint32_t, cas32((volatile uint32_t *)p, e, d))
SYNC_CAS(8, uint64_t, cas64((volatile uint64_t *)p, e, d))
SYNC_ALL(1, uint8_t)
SYNC_ALL(2, uint16_t)
SYNC_ALL(4, uint32_t)
SYNC_ALL(8, uint64_t)
