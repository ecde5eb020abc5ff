// SPDX-License-Identifier: MIT
/*
 * virtdetect.c - virtual machine and CPU emulation from the evidence
 * sysinfo.c gathers (see virtdetect.h, docs/definitions.md).
 */
#include "virtdetect.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "fmt.h"

/* x86 CPUID hypervisor signatures (leaf 0x40000000) and what they are. */
static const struct {
	const char *sig, *kind;
	int emulated;
} cpuid_sigs[] = {
	{ "TCGTCGTCGTCG", "tcg", 1 },  { "KVMKVMKVM", "kvm", 0 },
	{ "Microsoft Hv", "hyperv", 0 }, { "VMwareVMware", "vmware", 0 },
	{ "XenVMMXenVMM", "xen", 0 },  { "VBoxVBoxVBox", "virtualbox", 0 },
	{ "ACRNACRNACRN", "acrn", 0 }, { "bhyve bhyve ", "bhyve", 0 },
	{ " lrpepyh  vr", "parallels", 0 },
};

/* DMI names of hypervisors that run the guest's code on the CPU itself. */
static const char *const dmi_virt[][2] = {
	{ "VMware", "vmware" }, { "VirtualBox", "virtualbox" },
	{ "Xen", "xen" }, { "Microsoft", "hyperv" }, { "Amazon EC2", "aws" },
	{ "Google", "gce" }, { "Parallels", "parallels" },
};

/* Root compatibles of QEMU's own machines (no board has them). */
static const char *const qemu_machines[] = {
	"linux,dummy-virt", "qemu,pseries", "riscv-virtio", "qemu,virt",
};

/* True when word appears in text as a whole space-separated token. */
bool text_has_token(const char *text, const char *word)
{
	size_t n = strlen(word);
	const char *p = text;

	while ((p = strstr(p, word))) {
		if ((p == text || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
		p += n;
	}
	return false;
}

/* Fill out; returns 0 so that each rule of decide() reads as one statement. */
static int set(struct virt_result *out, const char *kind, int emulated,
	       const char *fmt, const char *arg)
{
	out->kind = kind;
	out->emulated = emulated;
	fmt_snprintf(out->evidence, sizeof(out->evidence), fmt, arg);
	return 0;
}

/* A sign of KVM running the guest (so not TCG); NULL when none. */
static const char *kvm_sign(const struct virt_evidence *ev)
{
	if (!strcmp(ev->cpuid_vendor, "KVMKVMKVM"))
		return "CPUID leaf 0x40000000 KVMKVMKVM";
	if (text_has_token(ev->clocksources, "kvm-clock"))
		return "clocksource kvm-clock";
	if (strstr(ev->dt_hypervisor, "linux,kvm"))
		return "device tree /hypervisor linux,kvm";
	return NULL;
}

/* The QEMU machine compatible in the device tree; NULL when none. */
static const char *qemu_machine(const struct virt_evidence *ev)
{
	size_t i;

	for (i = 0; i < sizeof(qemu_machines) / sizeof(qemu_machines[0]); i++)
		if (text_has_token(ev->dt_compatible, qemu_machines[i]))
			return qemu_machines[i];
	return NULL;
}

/* The first rule that the evidence meets decides (see virtdetect.h). */
static int decide(const struct virt_evidence *ev, struct virt_result *out)
{
	const char *kvm = kvm_sign(ev), *machine = qemu_machine(ev);
	size_t i;

	for (i = 0; i < sizeof(cpuid_sigs) / sizeof(cpuid_sigs[0]); i++)
		if (ev->cpuid_vendor[0] &&
		    !strcmp(ev->cpuid_vendor, cpuid_sigs[i].sig))
			return set(out, cpuid_sigs[i].kind, cpuid_sigs[i].emulated,
				   "CPUID leaf 0x40000000 %s", ev->cpuid_vendor);
	if (kvm)
		return set(out, "kvm", 0, "%s", kvm);
	if (ev->hypervisor_type[0])
		return set(out, ev->hypervisor_type, 0, "/sys/hypervisor/type %s",
			   ev->hypervisor_type);
	if (ev->dt_hypervisor[0])
		return set(out, "hypervisor", 0, "device tree /hypervisor %s",
			   ev->dt_hypervisor);
	if (machine)
		return set(out, "tcg", 1, "device tree compatible %s and no KVM "
			   "sign: QEMU emulating the CPU", machine);
	if (strstr(ev->dmi, "QEMU"))
		return set(out, "tcg", 1, "DMI %s and no KVM sign: QEMU "
			   "emulating the CPU", "QEMU");
	for (i = 0; i < sizeof(dmi_virt) / sizeof(dmi_virt[0]); i++)
		if (strstr(ev->dmi, dmi_virt[i][0]))
			return set(out, dmi_virt[i][1], 0, "DMI %s", dmi_virt[i][0]);
	if (ev->cpuid_hypervisor == 1 || ev->cpuinfo_hypervisor == 1)
		return set(out, "hypervisor", -1, "%s", ev->cpuid_hypervisor == 1 ?
			   "CPUID hypervisor bit, unknown signature" :
			   "cpuinfo flag hypervisor, unknown signature");
	if (ev->cpuid_hypervisor == 0)
		return set(out, "none", 0, "%s", "CPUID: no hypervisor bit");
	if (ev->dt_compatible[0])
		return set(out, "none", 0, "device tree names a board (%s), "
			   "no hypervisor node", ev->dt_compatible);
	if (ev->cpuinfo_hypervisor == 0)
		return set(out, "none", 0, "%s", "cpuinfo flags without hypervisor");
	return set(out, NULL, -1, "%s", "no evidence either way");
}

void virt_decide(const struct virt_evidence *ev, struct virt_result *out)
{
	memset(out, 0, sizeof(*out));
	decide(ev, out);
}
