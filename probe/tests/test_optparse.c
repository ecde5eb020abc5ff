// SPDX-License-Identifier: MIT
/*
 * test_optparse.c - the command-line walker (optparse.h): long options with
 * "=" and separate values, short options and clusters, "--", positional
 * arguments before options, and every error status with what it names.
 */
#include <stdio.h>
#include <string.h>

#include "optparse.h"
#include "tap.h"

#define MAX_ARGS 16

/* The long options of the cases: two with values, two flags. */
static const struct opt_long longs[] = {
	{ "out", 'o', true },
	{ "json", 'j', false },
	{ "groups", 'g', true },
	{ "threads", 'T', false },
	{ NULL, 0, false },
};

/* Append one step of the trace to buf. */
static void trace_step(char *buf, size_t len, const struct opt_parser *p,
		       int id)
{
	size_t used = strlen(buf);
	char *at = buf + used;
	size_t left = len - used;

	if (id >= 0 && p->value)
		snprintf(at, left, "%c=%s ", id, p->value);
	else if (id >= 0)
		snprintf(at, left, "%c ", id);
	else if (id == OPT_END)
		snprintf(at, left, "END rest=%d", p->rest);
	else
		snprintf(at, left, "%s[%s|%s|%c]",
			 id == OPT_UNKNOWN ? "UNKNOWN" :
			 id == OPT_MISSING_VALUE ? "MISSING" : "UNWANTED",
			 p->element, p->found ? p->found->name : "",
			 p->short_name ? p->short_name : '-');
}

/*
 * Walk args (after a made-up argv[0]) until the end or an error; the trace
 * lists each option as "ID=VALUE", each error as "KIND[ELEMENT|LONG|LETTER]"
 * and the end as "END rest=N".  Two more calls after the end must stay at the end.
 */
static void check(struct tap *t, const char *const args[], const char *want)
{
	char *argv[MAX_ARGS + 2];
	char trace[512] = "", line[256] = "";
	struct opt_parser p;
	int argc = 1, id, steps = 0;
	bool ends_stay = true;

	argv[0] = (char *)"cmd";
	while (args[argc - 1] && argc <= MAX_ARGS) {
		argv[argc] = (char *)args[argc - 1];
		argc++;
	}
	argv[argc] = NULL;
	opt_parser_init(&p, argc, argv, longs, "g:o:Th");
	do {
		id = opt_next(&p);
		trace_step(trace, sizeof(trace), &p, id);
	} while (id >= 0 && ++steps < 20);
	if (id == OPT_END)
		ends_stay = opt_next(&p) == OPT_END && opt_next(&p) == OPT_END;
	for (id = 1; id < argc; id++)
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 "%s'%s'", id > 1 ? " " : "", argv[id]);
	tap_ok(t, !strcmp(trace, want) && ends_stay, "%s -> %s", line, want);
	if (strcmp(trace, want))
		tap_diag("got: %s", trace);
}

int main(void)
{
	struct tap t = { 0, 0 };

	/* long options: "=", a separate value, flags */
	check(&t, (const char *[]){ "--out=f", "--json", NULL },
	      "o=f j END rest=3");
	check(&t, (const char *[]){ "--out", "f", NULL }, "o=f END rest=3");
	check(&t, (const char *[]){ "--out=", NULL }, "o= END rest=2");
	check(&t, (const char *[]){ "--out=a=b", NULL }, "o=a=b END rest=2");
	/* a separate value is the next element whatever it holds */
	check(&t, (const char *[]){ "--out", "-5", NULL }, "o=-5 END rest=3");
	check(&t, (const char *[]){ "--out", "--json", NULL },
	      "o=--json END rest=3");
	check(&t, (const char *[]){ "--out", "--", "--json", NULL },
	      "o=-- j END rest=4");
	check(&t, (const char *[]){ "--out", "-", NULL }, "o=- END rest=3");
	check(&t, (const char *[]){ "-g", "-5", NULL }, "g=-5 END rest=3");
	/* errors name the element, the long entry found and the letter */
	check(&t, (const char *[]){ "--json", "--out", NULL },
	      "j MISSING[--out|out|-]");
	check(&t, (const char *[]){ "--bogus", NULL }, "UNKNOWN[--bogus||-]");
	check(&t, (const char *[]){ "--bogus=1", NULL },
	      "UNKNOWN[--bogus=1||-]");
	check(&t, (const char *[]){ "--=x", NULL }, "UNKNOWN[--=x||-]");
	check(&t, (const char *[]){ "--ou", "f", NULL }, "UNKNOWN[--ou||-]");
	check(&t, (const char *[]){ "--json=1", NULL },
	      "UNWANTED[--json=1|json|-]");
	check(&t, (const char *[]){ "--json=", NULL },
	      "UNWANTED[--json=|json|-]");
	/* short options, values attached or separate, clusters */
	check(&t, (const char *[]){ "-g", "4", "-T", NULL },
	      "g=4 T END rest=4");
	check(&t, (const char *[]){ "-g4", NULL }, "g=4 END rest=2");
	check(&t, (const char *[]){ "-g=4", NULL }, "g==4 END rest=2");
	check(&t, (const char *[]){ "-ThT", NULL }, "T h T END rest=2");
	check(&t, (const char *[]){ "-Tg4", "-h", NULL }, "T g=4 h END rest=3");
	check(&t, (const char *[]){ "-Tg", "4", NULL }, "T g=4 END rest=3");
	check(&t, (const char *[]){ "-Tx", NULL }, "T UNKNOWN[-Tx||x]");
	check(&t, (const char *[]){ "--json", "-xh", NULL },
	      "j UNKNOWN[-xh||x]");
	check(&t, (const char *[]){ "-T:", NULL }, "T UNKNOWN[-T:||:]");
	check(&t, (const char *[]){ "-5", NULL }, "UNKNOWN[-5||5]");
	check(&t, (const char *[]){ "-g", NULL }, "MISSING[-g||g]");
	check(&t, (const char *[]){ "-Tg", NULL }, "T MISSING[-Tg||g]");
	/* "--" ends the options; what follows is positional */
	check(&t, (const char *[]){ "--", NULL }, "END rest=2");
	check(&t, (const char *[]){ "--json", "--", NULL }, "j END rest=3");
	check(&t, (const char *[]){ "--", "--json", NULL }, "END rest=2");
	check(&t, (const char *[]){ "--json", "--", "a", "--out", NULL },
	      "j END rest=3");
	/* positionals before options: options still read, rest the first */
	check(&t, (const char *[]){ "a", "--json", "b", "--out", "f", NULL },
	      "j o=f END rest=1");
	check(&t, (const char *[]){ "a", "--", "b", NULL }, "END rest=1");
	check(&t, (const char *[]){ "a", "--bogus", NULL },
	      "UNKNOWN[--bogus||-]");
	check(&t, (const char *[]){ "a", "--out", NULL },
	      "MISSING[--out|out|-]");
	/* "-" alone and "" are positionals */
	check(&t, (const char *[]){ "-", "--json", NULL }, "j END rest=1");
	check(&t, (const char *[]){ "--json", "", NULL }, "j END rest=2");
	check(&t, (const char *[]){ NULL }, "END rest=1");
	return tap_done(&t);
}
