/* SPDX-License-Identifier: MIT */
/*
 * commands.h - entry points of rtprobe's subcommands.
 *
 * Each returns the process exit code (rtprobe.h).  main.c dispatches on
 * argv[1]; argv passed on starts at the subcommand name (argv[0] = "cyclic").
 */
#ifndef RTP_COMMANDS_H
#define RTP_COMMANDS_H

int cmd_sysinfo(int argc, char **argv);
int cmd_cyclic(int argc, char **argv);
int cmd_load(int argc, char **argv);
int cmd_hackbench(int argc, char **argv);
int cmd_periodic(int argc, char **argv);
int cmd_clock(int argc, char **argv);
int cmd_wakeup(int argc, char **argv);
int cmd_ctx(int argc, char **argv);
int cmd_ipc(int argc, char **argv);
int cmd_event(int argc, char **argv);
int cmd_noise(int argc, char **argv);
int cmd_pi(int argc, char **argv);

#endif /* RTP_COMMANDS_H */
