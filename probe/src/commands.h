/* SPDX-License-Identifier: MIT */
/*
 * commands.h - entry points of rtprobe's commands that are not tests
 * (tests are struct test_desc, see engine/testdesc.h and catalogue.c).
 *
 * Each returns the process exit code (rtprobe.h).  main.c dispatches on
 * argv[1]; argv passed on starts at the command name (argv[0] = "load").
 */
#ifndef RTP_COMMANDS_H
#define RTP_COMMANDS_H

int cmd_sysinfo(int argc, char **argv);
int cmd_load(int argc, char **argv);
int cmd_describe(int argc, char **argv);

#endif /* RTP_COMMANDS_H */
