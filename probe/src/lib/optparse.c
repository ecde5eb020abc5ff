// SPDX-License-Identifier: MIT
/*
 * optparse.c - rtprobe's own command-line walker (see optparse.h).
 */
#include "optparse.h"

#include <string.h>

void opt_parser_init(struct opt_parser *p, int argc, char *const *argv,
		     const struct opt_long *longs, const char *shorts)
{
	*p = (struct opt_parser){
		.argc = argc, .argv = argv, .longs = longs, .shorts = shorts,
		.next = 1, .cluster = 0, .rest = -1,
	};
}

/* Whether an argv element is an option ("-" alone and "" are not). */
static bool opt_is_option(const char *arg)
{
	return arg[0] == '-' && arg[1] != '\0';
}

/* Read the long option at argv[next]; name follows its "--". */
static int opt_next_long(struct opt_parser *p, const char *name)
{
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct opt_long *o;

	p->next++;
	for (o = p->longs; o && o->name; o++)
		if (strlen(o->name) == len && !strncmp(o->name, name, len))
			break;
	if (!o || !o->name)
		return OPT_UNKNOWN;
	p->found = o;
	if (eq) {
		if (!o->takes_value)
			return OPT_UNWANTED_VALUE;
		p->value = eq + 1;
	} else if (o->takes_value) {
		if (p->next >= p->argc)
			return OPT_MISSING_VALUE;
		p->value = p->argv[p->next++];
	}
	return o->id;
}

/* Read the short option at argv[next][cluster], moving past it. */
static int opt_next_short(struct opt_parser *p)
{
	const char *arg = p->argv[p->next];
	char letter = arg[p->cluster++];
	const char *spec = NULL;

	p->element = arg;
	p->short_name = letter;
	if (letter != ':' && p->shorts)
		spec = strchr(p->shorts, letter);
	if (spec && spec[1] == ':') {
		/* The rest of the cluster, else the next element, is the value. */
		if (arg[p->cluster] != '\0') {
			p->value = arg + p->cluster;
		} else if (p->next + 1 < p->argc) {
			p->value = p->argv[p->next + 1];
			p->next++;
		}
		p->cluster = 0;
		p->next++;
		return p->value ? (unsigned char)letter : OPT_MISSING_VALUE;
	}
	if (arg[p->cluster] == '\0') {
		p->cluster = 0;
		p->next++;
	}
	return spec ? (unsigned char)letter : OPT_UNKNOWN;
}

int opt_next(struct opt_parser *p)
{
	const char *arg;

	p->found = NULL;
	p->short_name = 0;
	p->value = NULL;
	if (p->cluster)
		return opt_next_short(p);
	while (p->next < p->argc && !opt_is_option(p->argv[p->next])) {
		if (p->rest < 0)
			p->rest = p->next;
		p->next++;
	}
	if (p->next >= p->argc) {
		if (p->rest < 0)
			p->rest = p->argc;
		return OPT_END;
	}
	arg = p->argv[p->next];
	p->element = arg;
	if (!strcmp(arg, "--")) {
		/* Everything after "--" is positional. */
		if (p->rest < 0)
			p->rest = p->next + 1;
		p->next = p->argc;
		return OPT_END;
	}
	if (arg[1] == '-')
		return opt_next_long(p, arg + 2);
	p->cluster = 1;
	return opt_next_short(p);
}
