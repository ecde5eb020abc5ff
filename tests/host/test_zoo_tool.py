"""tools/zoo.py without downloading anything: each board's qemu command line and labgrid
environment (the boards themselves boot in `make test-boards`, tests/boards/)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rtbench.rtprobe.build import ARCHES
from tools.zoo import BOARDS, QEMU_PACKAGES, labgrid_env, main, qemu_argv


def test_every_board_has_a_probe_arch_a_qemu_package_and_its_console() -> None:
    assert {"arm64", "arm64-rt", "armhf-rt", "i386-rt", "mipsel", "ppc64el", "amd64",
            "amd64-rt"} == set(BOARDS)
    for board in BOARDS.values():
        assert board.probe_arch in ARCHES, board.name
        assert board.qemu in QEMU_PACKAGES, board.name
        argv = qemu_argv(board, Path("/k"), Path("/i.cpio"))
        assert argv[0] == board.qemu and argv[1:3] == ["-accel", "tcg"]
        append = argv[argv.index("-append") + 1]
        assert f"console={board.console}" in append and "rdinit=/init" in append


def test_labgrid_environment_is_a_qemu_driver_target() -> None:
    board = BOARDS["armhf-rt"]
    env = yaml.safe_load(labgrid_env(board, Path("/z/kernel"), Path("/z/initramfs.cpio")))
    driver = env["targets"]["main"]["drivers"]["QEMUDriver"]
    assert (driver["machine"], driver["cpu"]) == ("virt", "cortex-a15")
    assert "-initrd /z/initramfs.cpio" in driver["extra_args"]
    assert "console=ttyAMA0" in driver["boot_args"]
    assert env["images"]["kernel"] == "/z/kernel"
    assert env["tools"]["qemu"].endswith("qemu-system-arm")


def test_unknown_board_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vax"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no board 'vax'" in err
