/* SPDX-License-Identifier: MIT */
/*
 * sysinfo.h - facts about the target that decide real-time results.
 *
 * Written as one JSON object (the "sysinfo" member of every start record and
 * the whole output of `rtprobe sysinfo`).  Every fact that cannot be read is
 * null; nothing here ever fails the run.  Keys (documented in docs/schema.md):
 * uname{sysname,nodename,release,version,machine}, preempt_rt (bool|null),
 * preempt_model, cmdline, cpu_model, cpus_configured, cpus_online,
 * cpus_isolated, cpus_allowed, clocksource, clocksource_available,
 * governors{cpu: name}, idle_driver, idle_states[{cpu0 state name, latency_us,
 * disabled}], smt_active, smt_control, rt_runtime_us, rt_period_us,
 * thp_enabled, virtualization, mem_total_kib, mem_available_kib,
 * dt_compatible[], kernel_config_hints{...}, irqbalance_running.
 */
#ifndef RTP_SYSINFO_H
#define RTP_SYSINFO_H

#include "json.h"

/* Write the sysinfo object under key (NULL inside an array/top level). */
void sysinfo_write(struct json *j, const char *key);

/* Entry point of `rtprobe sysinfo`. */
int cmd_sysinfo(int argc, char **argv);

#endif /* RTP_SYSINFO_H */
