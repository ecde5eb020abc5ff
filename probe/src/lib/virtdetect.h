/* SPDX-License-Identifier: MIT */
/*
 * virtdetect.h - is this machine virtual, and is its CPU emulated?
 *
 * sysinfo.c gathers the evidence (x86 CPUID, DMI ids, /sys/hypervisor,
 * the device tree, clocksources, /proc/cpuinfo) into struct virt_evidence;
 * virt_decide() turns it into a kind, whether the CPU is emulated (QEMU's
 * TCG: figures then describe the emulator, not a board) and one line saying
 * what showed it.  It never answers "none" (bare metal) without evidence:
 * without any, kind is NULL and emulated is -1 (unknown).
 */
#ifndef RTP_VIRTDETECT_H
#define RTP_VIRTDETECT_H

#include <stdbool.h>

#define VIRT_TEXT 256

/* What the machine shows; empty strings and -1 mean "not seen". */
struct virt_evidence {
	int cpuid_hypervisor;          /* x86 CPUID.1:ECX bit 31: 1/0; -1 no CPUID */
	char cpuid_vendor[13];         /* leaf 0x40000000 signature */
	char dmi[VIRT_TEXT];           /* DMI product, vendor, BIOS vendor */
	char hypervisor_type[64];      /* /sys/hypervisor/type */
	char dt_compatible[VIRT_TEXT]; /* root compatible, space-separated */
	char dt_hypervisor[VIRT_TEXT]; /* /hypervisor node's compatible */
	char clocksources[VIRT_TEXT];  /* available_clocksource */
	int cpuinfo_hypervisor;        /* "hypervisor" in cpuinfo flags: 1/0/-1 */
};

/* The decision: kind ("kvm", "tcg", "xen", "none", ...; NULL unknown). */
struct virt_result {
	const char *kind;
	int emulated;                  /* 1 CPU emulated, 0 executed, -1 unknown */
	char evidence[VIRT_TEXT];
};

/* Decide from ev (pure). */
void virt_decide(const struct virt_evidence *ev, struct virt_result *out);

/* True when word appears in text as a whole space-separated token. */
bool text_has_token(const char *text, const char *word);

#endif /* RTP_VIRTDETECT_H */
