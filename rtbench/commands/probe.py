"""`rtbench probe build`: static rtprobe binaries for other CPUs (Zig's C compiler)."""

from __future__ import annotations

import click

from rtbench.commands._common import fail, handle_errors, make_console


def register(main: click.Group) -> None:
    """Add the `probe` command group to main."""
    main.add_command(probe_group)


@click.group("probe")
def probe_group() -> None:
    """Build rtprobe for the CPUs of boards."""


@probe_group.command("build")
@click.option("--arch", "arches", multiple=True, metavar="ARCH",
              help="Arch to build for (repeatable; default every one): x86_64, i386, aarch64, "
                   "armhf, armel, mips, mipsel, powerpc, ppc64le, riscv64.")
@click.option("--force", is_flag=True, help="Rebuild even when a cached binary exists.")
@handle_errors
def probe_build(arches: tuple[str, ...], force: bool) -> None:
    """Build static stripped rtprobe binaries (cached per arch and probe version)."""
    from rtbench.rtprobe.build import (
        ProbeBuildError,
        UnknownArch,
        arch_names,
        build_probe,
        cached_path,
        get_arch,
    )
    from rtbench.targets.progress import Progress

    console = make_console()
    names = list(arches) or arch_names()
    try:
        for name in names:
            get_arch(name)
    except UnknownArch as exc:
        fail(str(exc), 2)
    over: list[str] = []
    progress = Progress("rtbench probe build")
    for index, name in enumerate(names, 1):
        try:
            if force or not cached_path(name).is_file():
                with progress.ticking(f"{name} ({index}/{len(names)}): building with Zig, "
                                      "about a minute for an arch not built before"):
                    path = build_probe(name, force=force)
            else:
                path = build_probe(name)
        except ProbeBuildError as exc:
            fail(str(exc), 3)
        size, limit = path.stat().st_size, get_arch(name).size_limit
        note = "" if size <= limit else f"  over its bound of {limit // 1024} KiB"
        if note:
            over.append(name)
        console.print(f"{name:8} {size / 1024:7.1f} KiB  {path}{note}", markup=False,
                      highlight=False, soft_wrap=True)
    if over:
        console.print(f"{len(over)} of {len(names)} over their size bound: "
                      f"{', '.join(over)}", markup=False, highlight=False)
