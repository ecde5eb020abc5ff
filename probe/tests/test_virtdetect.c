// SPDX-License-Identifier: MIT
/*
 * test_virtdetect.c - virt_decide() on the evidence each arch's guests and
 * boards show: QEMU TCG (x86 CPUID, arm/arm64 -M virt, ppc64 pseries, DMI),
 * KVM on each arch, other hypervisors, bare metal with evidence, and no
 * evidence at all (never "none" then).
 */
#include <string.h>

#include "tap.h"
#include "virtdetect.h"

/* Evidence with nothing seen (as on a machine that shows nothing). */
static struct virt_evidence nothing(void)
{
	struct virt_evidence ev;

	memset(&ev, 0, sizeof(ev));
	ev.cpuid_hypervisor = -1;
	ev.cpuinfo_hypervisor = -1;
	return ev;
}

/* Check one case: kind (NULL for unknown), emulated, a piece of evidence. */
static void expect(struct tap *t, const char *name,
		   const struct virt_evidence *ev, const char *kind,
		   int emulated, const char *evidence)
{
	struct virt_result r;

	virt_decide(ev, &r);
	tap_ok(t, (kind ? r.kind && !strcmp(r.kind, kind) : !r.kind) &&
	       r.emulated == emulated && strstr(r.evidence, evidence),
	       "%s: %s emulated %d (%s)", name, r.kind ? r.kind : "null",
	       r.emulated, r.evidence);
}

int main(void)
{
	struct tap t = { 0, 0 };
	struct virt_evidence ev;

	ev = nothing();
	ev.cpuid_hypervisor = 1;
	strcpy(ev.cpuid_vendor, "TCGTCGTCGTCG");
	strcpy(ev.dmi, "Standard PC (i440FX + PIIX, 1996) QEMU SeaBIOS");
	expect(&t, "x86 TCG", &ev, "tcg", 1, "TCGTCGTCGTCG");

	strcpy(ev.cpuid_vendor, "KVMKVMKVM");
	strcpy(ev.clocksources, "tsc kvm-clock");
	expect(&t, "x86 KVM with QEMU DMI", &ev, "kvm", 0, "KVMKVMKVM");

	ev = nothing();
	ev.cpuid_hypervisor = 0;
	ev.cpuinfo_hypervisor = 0;
	expect(&t, "x86 bare metal", &ev, "none", 0, "no hypervisor bit");

	ev = nothing();
	strcpy(ev.dt_compatible, "linux,dummy-virt");
	expect(&t, "arm64 -M virt TCG", &ev, "tcg", 1, "linux,dummy-virt");

	strcpy(ev.dt_hypervisor, "linux,kvm");
	expect(&t, "ppc/arm KVM node", &ev, "kvm", 0, "linux,kvm");

	ev = nothing();
	strcpy(ev.dt_compatible, "qemu,pseries");
	expect(&t, "ppc64 pseries TCG", &ev, "tcg", 1, "qemu,pseries");

	ev = nothing();
	strcpy(ev.dmi, "KVM Virtual Machine QEMU EFI Development Kit II");
	expect(&t, "arm64 UEFI DMI QEMU", &ev, "tcg", 1, "DMI QEMU");
	strcpy(ev.clocksources, "arch_sys_counter kvm-clock");
	expect(&t, "DMI QEMU with kvm-clock", &ev, "kvm", 0, "kvm-clock");

	ev = nothing();
	strcpy(ev.dt_compatible, "raspberrypi,4-model-b brcm,bcm2711");
	expect(&t, "arm board", &ev, "none", 0, "raspberrypi,4-model-b");

	strcpy(ev.hypervisor_type, "xen");
	expect(&t, "Xen on ARM", &ev, "xen", 0, "/sys/hypervisor/type xen");

	ev = nothing();
	strcpy(ev.dmi, "VMware Virtual Platform VMware, Inc.");
	expect(&t, "VMware DMI", &ev, "vmware", 0, "VMware");

	ev = nothing();
	ev.cpuinfo_hypervisor = 1;
	expect(&t, "hypervisor flag only", &ev, "hypervisor", -1, "unknown");

	ev = nothing();
	expect(&t, "no evidence", &ev, NULL, -1, "no evidence");
	strcpy(ev.dt_compatible, "mti,malta");
	expect(&t, "a board's device tree", &ev, "none", 0, "mti,malta");
	return tap_done(&t);
}
