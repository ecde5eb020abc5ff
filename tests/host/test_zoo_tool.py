"""tools/zoo.py without downloading anything: each board's qemu command line and labgrid
environment (the boards themselves boot in `make test-boards`, tests/boards/)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

import tools.zoo as zoo
from rtbench.rtprobe.build import ARCHES
from tools.zoo import BOARDS, QEMU_PACKAGES, labgrid_env, listed_boards, main, qemu_argv


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


def test_board_list_picks_boards_and_refuses_an_unknown_one() -> None:
    assert listed_boards(None) == list(BOARDS) == listed_boards(" ")
    assert listed_boards("arm64-rt, ppc64el,arm64-rt") == ["arm64-rt", "ppc64el"]
    with pytest.raises(ValueError, match="RTBENCH_ZOO_BOARDS: no board 'arm65'"):
        listed_boards("arm64,arm65")


def _no_apt(*args: object, **kwargs: object) -> None:
    raise AssertionError(f"apt was asked: {args}")


def test_cached_debs_are_used_without_apt(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The .debs in the zoo's cache need no apt index (a foreign one may be mid-sync)."""
    debs = tmp_path / "debs"
    debs.mkdir()
    for name in ("linux-image-6.1.0-50-rt-arm64_6.1.176-1_arm64.deb",
                 "linux-image-6.1.0-50-arm64_6.1.176-1_arm64.deb",
                 "busybox-static_1%3a1.35.0-4+deb12u1+b1_arm64.deb"):
        (debs / name).write_bytes(b"deb")
    monkeypatch.setattr(zoo.subprocess, "run", _no_apt)
    monkeypatch.setattr(zoo, "_run", _no_apt)
    assert zoo.kernel_deb(BOARDS["arm64-rt"], debs).name.startswith(
        "linux-image-6.1.0-50-rt-arm64_")
    assert zoo.kernel_deb(BOARDS["arm64"], debs).name.startswith("linux-image-6.1.0-50-arm64_")
    assert zoo.busybox_deb(BOARDS["arm64"], debs).name.startswith("busybox-static_")


def test_failed_index_update_is_retried_then_said_in_one_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    calls: list[list[str]] = []
    failed = ("Err:16 http://deb.debian.org/debian-security bookworm-security/main armhf\n"
              "E: Failed to fetch http://deb.debian.org/debian-security/dists/bookworm-"
              "security/main/binary-armhf/Packages.xz  File has unexpected size (1 != 2). "
              "Mirror sync in progress?\nE: Some index files failed to download.\n")

    def apt(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 100, "", failed)

    monkeypatch.setattr(zoo.subprocess, "run", apt)
    monkeypatch.setattr(zoo.time, "sleep", lambda s: None)
    zoo.refresh_index()
    assert calls == [["apt-get", "update"]] * 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "E: Failed to fetch binary-armhf/Packages.xz  File has unexpected size" in err
    assert "going on" in err


def test_download_goes_through_a_private_folder(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A download cut short leaves nothing that looks like a cached .deb; a whole one is
    moved into the cache."""
    def cut_short(argv: list[str], cwd: str = "", **kwargs: object
                  ) -> subprocess.CompletedProcess[str]:
        if argv[:2] == ["apt-get", "download"]:
            (Path(cwd) / "busybox-static_1_armhf.deb").write_bytes(b"half")
            return subprocess.CompletedProcess(argv, 100, "", "E: connection reset\n")
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(zoo.subprocess, "run", cut_short)
    with pytest.raises(SystemExit, match="apt-get download busybox-static:armhf failed: "
                                         "E: connection reset"):
        zoo.download("busybox-static", "armhf", tmp_path)
    assert list(tmp_path.iterdir()) == []

    def whole(argv: list[str], cwd: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        (Path(cwd) / "busybox-static_1_armhf.deb").write_bytes(b"deb")
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(zoo.subprocess, "run", whole)
    assert zoo.download("busybox-static", "armhf", tmp_path) == \
        tmp_path / "busybox-static_1_armhf.deb"
    assert [p.name for p in tmp_path.iterdir()] == ["busybox-static_1_armhf.deb"]


def test_a_board_listed_for_test_boards_fails_rather_than_skips(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """make test-boards with RTBENCH_ZOO_BOARDS (as .ci/run): a listed board that cannot
    run here fails; without the list it skips for want of the part."""
    from tests.boards import test_zoo

    monkeypatch.setattr(test_zoo, "why_not", lambda board: ("qemu", "qemu-system-x missing"))
    monkeypatch.delenv("RTBENCH_ZOO_BOARDS", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"\[qemu\] qemu-system-x missing"):
        test_zoo.require_board_parts(BOARDS["mipsel"])
    monkeypatch.setenv("RTBENCH_ZOO_BOARDS", "mipsel,arm64")
    with pytest.raises(pytest.fail.Exception, match="mipsel is listed in RTBENCH_ZOO_BOARDS "
                                                    r"but cannot run here: \[qemu\]"):
        test_zoo.require_board_parts(BOARDS["mipsel"])


def test_guests_get_two_vcpus_where_their_board_runs_smp() -> None:
    """noise and pi need a CPU besides the one they fill: two vCPUs by default, one on
    mipsel (Debian's 4kc-malta kernel is not SMP), and the tests' one when asked."""
    for board in BOARDS.values():
        argv = qemu_argv(board, Path("/k"), Path("/i.cpio"))
        assert argv[argv.index("-smp") + 1] == ("1" if board.name == "mipsel" else "2")
        one = qemu_argv(board, Path("/k"), Path("/i.cpio"), cpus=1)
        assert one[one.index("-smp") + 1] == "1"
        env = labgrid_env(board, Path("/k"), Path("/i.cpio"))
        assert f"-smp {zoo.guest_cpus(board, 2)} " in env


def test_one_guest_root_for_the_zoo_and_the_tests(tmp_path: Path) -> None:
    """tools/zoo.py's root (also tests/host/qemu_board.py's): busybox, /init, and the
    writable directories of a real board, which the io and build loads write in."""
    busybox = tmp_path / "busybox"
    busybox.write_bytes(b"\x7fELF")
    program = tmp_path / "fifoburst"
    program.write_bytes(b"\x7fELF")
    root = tmp_path / "root"
    zoo.populate_root(root, busybox, [program])
    for sub in ("tmp", "var/tmp"):
        assert (root / sub).stat().st_mode & 0o7777 == 0o1777, sub
    assert (root / "run").is_dir() and (root / "bin" / "fifoburst").is_file()
    assert (root / "bin" / "sh").readlink() == Path("busybox")
    init = (root / "init").read_text()
    assert "mkdir -p /dev/shm /run /tmp /var/tmp" in init
    assert "mount -t tmpfs -o mode=1777 shm /dev/shm" in init
    import tests.host.qemu_board as qemu_board

    assert not hasattr(qemu_board, "INIT")  # one /init, the zoo's
