// SPDX-License-Identifier: MIT
/*
 * sysinfo.c - facts about the target that decide real-time results, read
 * from uname, /proc and /sys; `rtprobe sysinfo` prints them as one JSON line.
 * Every fact that cannot be read is written as null; nothing here fails.
 */
#include "sysinfo.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common.h"
#include "fmt.h"
#include "numtext.h"
#include "opt.h"
#include "output.h"
#include "rtprobe.h"
#include "sort.h"
#include "virtdetect.h"

#define SYS_CPU "/sys/devices/system/cpu"

/*
 * Read up to buflen - 1 bytes of a file into buf, NUL-terminated, trailing
 * newlines removed.  Returns the length, or -1 when it cannot be read.
 */
static ssize_t read_text(const char *path, char *buf, size_t buflen)
{
	FILE *f = fopen(path, "re");
	size_t len;

	if (!f)
		return -1;
	len = fread(buf, 1, buflen - 1, f);
	if (ferror(f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[len] = '\0';
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
	return (ssize_t)len;
}

/* Write a file's first line(s) as a string member, or null. */
static void put_file_str(struct json *j, const char *key, const char *path)
{
	char buf[4096];

	if (read_text(path, buf, sizeof(buf)) < 0)
		json_null(j, key);
	else
		json_str(j, key, buf);
}

/* Write a file holding one integer as a number member, or null. */
static void put_file_int(struct json *j, const char *key, const char *path)
{
	char buf[64];
	const char *end;
	long long v;
	bool range;

	if (read_text(path, buf, sizeof(buf)) <= 0) {
		json_null(j, key);
		return;
	}
	end = numtext_ll(buf, &v, &range);
	if (range || *end)
		json_null(j, key);
	else
		json_i64(j, key, v);
}

/*
 * Return the marked choice of a selector like "a [b] c" (sysfs) or
 * "none (full)" (debugfs sched/preempt), or NULL when none is marked.
 */
static const char *selected_choice(char *buf)
{
	char *open = strpbrk(buf, "[("), *close;

	if (!open)
		return NULL;
	close = strchr(open, *open == '[' ? ']' : ')');
	if (!close)
		return NULL;
	*close = '\0';
	return open + 1;
}

/* Write the bracketed choice of a sysfs selector file, or null. */
static void put_file_choice(struct json *j, const char *key, const char *path)
{
	char buf[512];

	if (read_text(path, buf, sizeof(buf)) < 0)
		json_null(j, key);
	else
		json_str(j, key, selected_choice(buf));
}

/* Write the uname fields as an object (null when uname fails). */
static void put_uname(struct json *j, const struct utsname *u, bool ok)
{
	if (!ok) {
		json_null(j, "uname");
		return;
	}
	json_begin_object(j, "uname");
	json_str(j, "sysname", u->sysname);
	json_str(j, "nodename", u->nodename);
	json_str(j, "release", u->release);
	json_str(j, "version", u->version);
	json_str(j, "machine", u->machine);
	json_end_object(j);
}


/*
 * PREEMPT_RT: /sys/kernel/realtime reads 1 on RT kernels; otherwise the
 * uname version string names PREEMPT_RT.  The preemption model comes from
 * debugfs sched/preempt (dynamic kernels) or the uname version string.
 */
static void put_preempt(struct json *j, const struct utsname *u, bool ok)
{
	char buf[256];
	const char *model = NULL;
	bool rt;

	rt = read_text("/sys/kernel/realtime", buf, sizeof(buf)) > 0 &&
	     buf[0] == '1';
	if (ok && text_has_token(u->version, "PREEMPT_RT"))
		rt = true;
	if (rt || ok)
		json_bool(j, "preempt_rt", rt);
	else
		json_null(j, "preempt_rt");
	if (read_text("/sys/kernel/debug/sched/preempt", buf, sizeof(buf)) > 0)
		model = selected_choice(buf);
	if (!model && rt)
		model = "rt";
	if (!model && ok) {
		if (text_has_token(u->version, "PREEMPT_DYNAMIC"))
			model = "dynamic";
		else if (text_has_token(u->version, "PREEMPT"))
			model = "full";
	}
	json_str(j, "preempt_model", model);
}

/* The CPU model line of /proc/cpuinfo (first of several arch spellings). */
static void put_cpu_model(struct json *j)
{
	static const char *const keys[] = { "model name", "cpu model",
					    "Processor", "Hardware", "cpu",
					    "uarch", NULL };
	char line[512], best[512] = "";
	int best_rank = 100, i;
	FILE *f = fopen("/proc/cpuinfo", "re");
	char *colon, *v;
	size_t klen;

	if (!f) {
		json_null(j, "cpu_model");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		colon = strchr(line, ':');
		if (!colon)
			continue;
		for (klen = (size_t)(colon - line);
		     klen && isspace((unsigned char)line[klen - 1]); klen--)
			;
		for (i = 0; keys[i] && i < best_rank; i++) {
			if (strlen(keys[i]) != klen ||
			    strncmp(line, keys[i], klen))
				continue;
			for (v = colon + 1; isspace((unsigned char)*v); v++)
				;
			v[strcspn(v, "\n")] = '\0';
			if (*v) {
				fmt_snprintf(best, sizeof(best), "%s", v);
				best_rank = i;
			}
			break;
		}
	}
	fclose(f);
	json_str(j, "cpu_model", best[0] ? best : NULL);
}

/* The allowed CPUs of this process as a list string, or null. */
static void put_cpus_allowed(struct json *j)
{
	cpu_set_t set;
	char buf[1024];

	if (sched_getaffinity(0, sizeof(set), &set)) {
		json_null(j, "cpus_allowed");
		return;
	}
	opt_cpulist_format(&set, buf, sizeof(buf));
	json_str(j, "cpus_allowed", buf);
}

/* A space-separated sysfs list as an array of strings, or null. */
static void put_file_words(struct json *j, const char *key, const char *path,
			   char sep)
{
	char buf[4096], *p, *next;

	if (read_text(path, buf, sizeof(buf)) < 0) {
		json_null(j, key);
		return;
	}
	json_begin_array(j, key);
	for (p = buf; *p; p = next) {
		next = strchr(p, sep);
		if (next)
			*next++ = '\0';
		else
			next = p + strlen(p);
		if (*p)
			json_str(j, NULL, p);
	}
	json_end_array(j);
}

/* Compare two CPU numbers (for sort_heap). */
static int cpu_num_cmp(const void *a, const void *b)
{
	long na = *(const long *)a, nb = *(const long *)b;

	return (na > nb) - (na < nb);
}

/* N of a directory entry named cpuN, or -1 for any other name. */
static long cpu_dir_num(const char *name)
{
	const char *p = name;
	long long v;
	bool range;

	if (strncmp(p, "cpu", 3) || !p[3])
		return -1;
	for (p += 3; *p; p++)
		if (!isdigit((unsigned char)*p))
			return -1;
	numtext_ll(name + 3, &v, &range);
	return v > LONG_MAX ? LONG_MAX : (long)v;
}

/*
 * The numbers N of the cpuN directories in SYS_CPU, sorted, in a malloc'd
 * array (*out, may be NULL when there are none); their count, or -1.
 */
static long cpu_dir_nums(long **out)
{
	long *nums = NULL, *grown, count = 0, room = 0, n;
	struct dirent *d;
	DIR *dir = opendir(SYS_CPU);

	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		n = cpu_dir_num(d->d_name);
		if (n < 0)
			continue;
		if (count == room) {
			room = room ? 2 * room : 64;
			grown = realloc(nums, (size_t)room * sizeof(*nums));
			if (!grown) {
				free(nums);
				closedir(dir);
				return -1;
			}
			nums = grown;
		}
		nums[count++] = n;
	}
	closedir(dir);
	sort_heap(nums, (size_t)count, sizeof(*nums), cpu_num_cmp);
	*out = nums;
	return count;
}

/* Per-CPU cpufreq governor as {"cpu0": "performance", ...}, or null. */
static void put_governors(struct json *j)
{
	long *nums = NULL, n, i;
	char path[320], buf[64], name[32];
	int found = 0;

	n = cpu_dir_nums(&nums);
	if (n < 0) {
		json_null(j, "governors");
		return;
	}
	for (i = 0; i < n; i++) {
		fmt_snprintf(name, sizeof(name), "cpu%ld", nums[i]);
		fmt_snprintf(path, sizeof(path), SYS_CPU "/%s/cpufreq/scaling_governor",
			     name);
		if (read_text(path, buf, sizeof(buf)) < 0)
			continue;
		if (!found++)
			json_begin_object(j, "governors");
		json_str(j, name, buf);
	}
	free(nums);
	if (found)
		json_end_object(j);
	else
		json_null(j, "governors");
}

/* cpu0's idle states [{state, name, latency_us, disabled}], or null. */
static void put_idle_states(struct json *j)
{
	char path[300], buf[128];
	int state;

	fmt_snprintf(path, sizeof(path), SYS_CPU "/cpu0/cpuidle/state0/name");
	if (access(path, R_OK)) {
		json_null(j, "idle_states");
		return;
	}
	json_begin_array(j, "idle_states");
	for (state = 0; state < 64; state++) {
		fmt_snprintf(path, sizeof(path), SYS_CPU "/cpu0/cpuidle/state%d/name",
			     state);
		if (read_text(path, buf, sizeof(buf)) < 0)
			break;
		json_begin_object(j, NULL);
		json_i64(j, "state", state);
		json_str(j, "name", buf);
		fmt_snprintf(path, sizeof(path),
			     SYS_CPU "/cpu0/cpuidle/state%d/latency", state);
		put_file_int(j, "latency_us", path);
		fmt_snprintf(path, sizeof(path),
			     SYS_CPU "/cpu0/cpuidle/state%d/disable", state);
		if (read_text(path, buf, sizeof(buf)) > 0)
			json_bool(j, "disabled", buf[0] != '0');
		else
			json_null(j, "disabled");
		json_end_object(j);
	}
	json_end_array(j);
}

/* A 0/1 sysfs file as a boolean member, or null. */
static void put_file_bool(struct json *j, const char *key, const char *path)
{
	char buf[16];

	if (read_text(path, buf, sizeof(buf)) <= 0)
		json_null(j, key);
	else
		json_bool(j, key, buf[0] != '0');
}

/* Does /proc/cpuinfo's flags line carry flag? -1 when unreadable/absent. */
static int cpuinfo_flag(const char *flag)
{
	char line[4096];
	FILE *f = fopen("/proc/cpuinfo", "re");
	int found = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		line[strcspn(line, "\n")] = '\0';
		found = text_has_token(line, flag);
		break;
	}
	fclose(f);
	return found;
}

/* x86 CPUID: the hypervisor bit and leaf 0x40000000's signature. */
static void cpuid_evidence(struct virt_evidence *ev)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned int a = 0, b = 0, c = 0, d = 0;

	ev->cpuid_hypervisor = 0;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return;
	ev->cpuid_hypervisor = (c >> 31) & 1;
	if (!ev->cpuid_hypervisor)
		return;
	__cpuid(0x40000000, a, b, c, d);
	memcpy(ev->cpuid_vendor, &b, 4);
	memcpy(ev->cpuid_vendor + 4, &c, 4);
	memcpy(ev->cpuid_vendor + 8, &d, 4);
	ev->cpuid_vendor[12] = '\0';
#else
	ev->cpuid_hypervisor = -1;
#endif
}

/* A device tree property's NUL-separated strings, space-separated. */
static void dt_strings(const char *const *paths, char *buf, size_t buflen)
{
	size_t len = 0, i;
	FILE *f = NULL;

	buf[0] = '\0';
	for (i = 0; paths[i] && !f; i++)
		f = fopen(paths[i], "re");
	if (!f)
		return;
	len = fread(buf, 1, buflen - 1, f);
	fclose(f);
	buf[len] = '\0';
	while (len > 0 && buf[len - 1] == '\0')
		len--;
	for (i = 0; i < len; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
}

/* Everything the decision reads (virtdetect.h); a file not there is "". */
static void virt_gather(struct virt_evidence *ev)
{
	static const char *const dmi[] = { "/sys/class/dmi/id/product_name",
					   "/sys/class/dmi/id/sys_vendor",
					   "/sys/class/dmi/id/bios_vendor",
					   NULL };
	static const char *const compat[] = {
		"/sys/firmware/devicetree/base/compatible",
		"/proc/device-tree/compatible", NULL };
	static const char *const hyp[] = {
		"/sys/firmware/devicetree/base/hypervisor/compatible",
		"/proc/device-tree/hypervisor/compatible", NULL };
	char buf[128];
	size_t used = 0;
	int i, n;

	memset(ev, 0, sizeof(*ev));
	cpuid_evidence(ev);
	for (i = 0; dmi[i]; i++) {
		if (read_text(dmi[i], buf, sizeof(buf)) <= 0)
			continue;
		n = fmt_snprintf(ev->dmi + used, sizeof(ev->dmi) - used,
				 "%s%s", used ? " " : "", buf);
		if (n > 0)
			used += (size_t)n;
		if (used >= sizeof(ev->dmi) - 1)
			break;
	}
	if (read_text("/sys/hypervisor/type", ev->hypervisor_type,
		      sizeof(ev->hypervisor_type)) < 0)
		ev->hypervisor_type[0] = '\0';
	dt_strings(compat, ev->dt_compatible, sizeof(ev->dt_compatible));
	dt_strings(hyp, ev->dt_hypervisor, sizeof(ev->dt_hypervisor));
	if (read_text("/sys/devices/system/clocksource/clocksource0/"
		      "available_clocksource", ev->clocksources,
		      sizeof(ev->clocksources)) < 0)
		ev->clocksources[0] = '\0';
	ev->cpuinfo_hypervisor = cpuinfo_flag("hypervisor");
}

/*
 * virtualization (a kind, or null when nothing tells), emulated (true under
 * CPU emulation such as QEMU's TCG; null when unknown) and the evidence.
 */
static void put_virtualization(struct json *j)
{
	struct virt_evidence ev;
	struct virt_result res;

	virt_gather(&ev);
	virt_decide(&ev, &res);
	json_str(j, "virtualization", res.kind);
	if (res.emulated < 0)
		json_null(j, "emulated");
	else
		json_bool(j, "emulated", res.emulated == 1);
	json_str(j, "virtualization_evidence", res.evidence);
}

/* MemTotal and MemAvailable from /proc/meminfo (each null if absent). */
static void put_meminfo(struct json *j)
{
	char line[256];
	long long total = -1, avail = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "MemTotal:", 9))
				numtext_leading_ll(line + 9, &total);
			else if (!strncmp(line, "MemAvailable:", 13))
				numtext_leading_ll(line + 13, &avail);
		}
		fclose(f);
	}
	if (total >= 0)
		json_i64(j, "mem_total_kib", total);
	else
		json_null(j, "mem_total_kib");
	if (avail >= 0)
		json_i64(j, "mem_available_kib", avail);
	else
		json_null(j, "mem_available_kib");
}

/* Device-tree "compatible" strings (NUL separated), or null without a DT. */
static void put_dt_compatible(struct json *j)
{
	static const char *const paths[] = {
		"/sys/firmware/devicetree/base/compatible",
		"/proc/device-tree/compatible", NULL };
	char buf[1024];
	size_t len = 0, off;
	FILE *f = NULL;
	int i;

	for (i = 0; paths[i] && !f; i++)
		f = fopen(paths[i], "re");
	if (f) {
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	if (!len) {
		json_null(j, "dt_compatible");
		return;
	}
	buf[len] = '\0';
	json_begin_array(j, "dt_compatible");
	for (off = 0; off < len; off += strlen(buf + off) + 1)
		if (buf[off])
			json_str(j, NULL, buf + off);
	json_end_array(j);
}

/*
 * Selected kernel options from /boot/config-RELEASE (the usual Debian
 * place): value as written ("y", "1000"), null when not set.  The whole
 * object is null when no config file is readable.
 */
static void put_kernel_config(struct json *j, const struct utsname *u,
			      bool ok)
{
	static const char *const keys[] = {
		"CONFIG_PREEMPT_RT", "CONFIG_PREEMPT", "CONFIG_PREEMPT_VOLUNTARY",
		"CONFIG_PREEMPT_NONE", "CONFIG_PREEMPT_DYNAMIC", "CONFIG_HZ",
		"CONFIG_NO_HZ_FULL", "CONFIG_NO_HZ_IDLE", "CONFIG_HIGH_RES_TIMERS",
		"CONFIG_RCU_NOCB_CPU", "CONFIG_CPU_FREQ", "CONFIG_CPU_IDLE",
		"CONFIG_IRQ_FORCED_THREADING", "CONFIG_LOCKDEP",
		"CONFIG_DEBUG_PREEMPT", "CONFIG_KASAN", NULL };
	char path[320], line[512], values[16][32];
	bool set[16] = { false };
	size_t klen;
	FILE *f;
	int i;

	if (!ok) {
		json_null(j, "kernel_config_hints");
		return;
	}
	fmt_snprintf(path, sizeof(path), "/boot/config-%s", u->release);
	f = fopen(path, "re");
	if (!f) {
		json_null(j, "kernel_config_hints");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		for (i = 0; keys[i]; i++) {
			klen = strlen(keys[i]);
			if (!strncmp(line, keys[i], klen) && line[klen] == '=') {
				fmt_snprintf(values[i], sizeof(values[i]), "%s",
					     line + klen + 1);
				set[i] = true;
			}
		}
	}
	fclose(f);
	json_begin_object(j, "kernel_config_hints");
	json_str(j, "source", path);
	for (i = 0; keys[i]; i++)
		json_str(j, keys[i], set[i] ? values[i] : NULL);
	json_end_object(j);
}

/* Is a process named irqbalance running?  null when /proc is unreadable. */
static void put_irqbalance(struct json *j)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[300], comm[64];
	bool found = false;

	if (!d) {
		json_null(j, "irqbalance_running");
		return;
	}
	while (!found && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		fmt_snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (read_text(path, comm, sizeof(comm)) > 0 &&
		    !strcmp(comm, "irqbalance"))
			found = true;
	}
	closedir(d);
	json_bool(j, "irqbalance_running", found);
}

/*
 * sysconf(_SC_NPROCESSORS_CONF) as the C library it is built with defines
 * it: glibc counts /sys/devices/system/cpu/possible, musl the CPUs of the
 * affinity mask (1 when that cannot be read), which board builds count
 * here themselves to leave musl's sysconf table out.
 */
static long cpus_configured(void)
{
#ifdef __GLIBC__
	return sysconf(_SC_NPROCESSORS_CONF);
#else
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	return CPU_COUNT(&set);
#endif
}

/* Write the sysinfo object under key (NULL inside an array/top level). */
void sysinfo_write(struct json *j, const char *key)
{
	struct utsname u;
	bool uname_ok = uname(&u) == 0;
	long conf = cpus_configured();

	json_begin_object(j, key);
	put_uname(j, &u, uname_ok);
	put_preempt(j, &u, uname_ok);
	put_file_str(j, "cmdline", "/proc/cmdline");
	put_cpu_model(j);
	if (conf > 0)
		json_i64(j, "cpus_configured", conf);
	else
		json_null(j, "cpus_configured");
	put_file_str(j, "cpus_online", SYS_CPU "/online");
	put_file_str(j, "cpus_isolated", SYS_CPU "/isolated");
	put_cpus_allowed(j);
	put_file_str(j, "clocksource",
		     "/sys/devices/system/clocksource/clocksource0/"
		     "current_clocksource");
	put_file_words(j, "clocksource_available",
		       "/sys/devices/system/clocksource/clocksource0/"
		       "available_clocksource", ' ');
	put_governors(j);
	put_file_str(j, "idle_driver", SYS_CPU "/cpuidle/current_driver");
	put_idle_states(j);
	put_file_bool(j, "smt_active", SYS_CPU "/smt/active");
	put_file_str(j, "smt_control", SYS_CPU "/smt/control");
	put_file_int(j, "rt_runtime_us", "/proc/sys/kernel/sched_rt_runtime_us");
	put_file_int(j, "rt_period_us", "/proc/sys/kernel/sched_rt_period_us");
	put_file_choice(j, "thp_enabled",
			"/sys/kernel/mm/transparent_hugepage/enabled");
	put_virtualization(j);
	put_meminfo(j);
	put_dt_compatible(j);
	put_kernel_config(j, &u, uname_ok);
	put_irqbalance(j);
	json_end_object(j);
}

/* Print the help of `rtprobe sysinfo`. */
static void sysinfo_usage(FILE *f)
{
	fputs("usage: rtprobe sysinfo [--output FILE]\n\n"
	      "Print the target's real-time facts (kernel, preemption model, "
	      "CPUs,\nclocksource, governors, idle states, SMT, RT throttling, "
	      "THP,\nvirtualization, memory, device tree) as one JSON line. "
	      "A fact that\ncannot be read is null.\n\n"
	      "  --output FILE   write the JSON line to FILE instead of stdout\n"
	      "  --help          this text\n\n"
	      "Example: rtprobe sysinfo --output target.json\n", f);
}

/* Entry point of `rtprobe sysinfo`. */
int cmd_sysinfo(int argc, char **argv)
{
	static const struct opt_long opts[] = {
		{ "output", 'o', true },
		{ "help", 'h', false },
		{ NULL, 0, false },
	};
	struct opt_parser p;
	const char *output = NULL;
	struct json j;
	struct output out;
	int id, rc;

	opt_check_args(argc, argv, opts, NULL);
	opt_parser_init(&p, argc, argv, opts, NULL);
	while ((id = opt_next(&p)) != OPT_END) {
		switch (id) {
		case 'o':
			if (!*p.value)
				opt_fail("--output", p.value, "must not be empty");
			output = p.value;
			break;
		case 'h':
			sysinfo_usage(stdout);
			return RTP_EXIT_OK;
		default:
			common_bad_option("sysinfo", &p, id);
		}
	}
	if (p.rest < argc) {
		fmt_fprintf(stderr, "rtprobe: unexpected argument '%s': rtprobe "
			    "sysinfo takes only options (see --help)\n",
			    argv[p.rest]);
		return RTP_EXIT_USAGE;
	}
	rc = output_open(&out, "--output", output);
	if (rc)
		return rc;
	json_init(&j);
	sysinfo_write(&j, NULL);
	output_emit(&out, &j);
	json_free(&j);
	if (output_close(&out))
		return RTP_EXIT_ENV;
	return RTP_EXIT_OK;
}
