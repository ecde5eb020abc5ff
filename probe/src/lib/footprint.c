// SPDX-License-Identifier: MIT
/*
 * footprint.c - the binary size and memory figures of footprint.h.
 */
#include "footprint.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "json.h"
#include "numtext.h"

/* A "Key:   N kB" line of /proc/self/status, in KiB; -1 when absent. */
static long long status_kib(const char *key)
{
	size_t keylen = strlen(key);
	long long value = -1;
	char line[256];
	FILE *f;

	f = fopen("/proc/self/status", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, keylen) && line[keylen] == ':') {
			if (!numtext_leading_ll(line + keylen + 1, &value))
				value = -1;
			break;
		}
	}
	fclose(f);
	return value;
}

/* Write key as an integer, or null when value is negative. */
static void write_or_null(struct json *j, const char *key, long long value)
{
	if (value < 0)
		json_null(j, key);
	else
		json_u64(j, key, (uint64_t)value);
}

void footprint_write(struct json *j)
{
	struct rusage children;
	struct stat st;

	json_begin_object(j, "footprint");
	write_or_null(j, "binary_bytes",
		      stat("/proc/self/exe", &st) ? -1 : (long long)st.st_size);
	write_or_null(j, "peak_rss_kib", status_kib("VmHWM"));
	write_or_null(j, "locked_kib", status_kib("VmLck"));
	write_or_null(j, "children_peak_rss_kib",
		      getrusage(RUSAGE_CHILDREN, &children) ? -1 :
		      (long long)children.ru_maxrss);
	json_end_object(j);
}
