"""rtbench.rtprobe's call builders and answer readers: argv, --version, sysinfo, the
probe provider (pure: no probe runs here)."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import pytest

from rtbench.rtprobe.argv import format_duration, load_args, measure_args
from rtbench.rtprobe.catalogue import TestKind as Traits
from rtbench.rtprobe.provider import Probes, ProbeUnavailable
from rtbench.rtprobe.sysinfo import ProbeAnswerError, sysinfo_of, version_of
from rtbench.rtprobe.wire.raw import parse_raw, read_raw
from rtbench.targets.base import TargetError
from rtbench.targets.ssh import SshTarget


@dataclass(frozen=True)
class Answer:
    """A finished call as a target returns it."""

    returncode: int
    stdout: str
    stderr: str = ""


def test_format_duration_uses_the_largest_exact_unit() -> None:
    assert [format_duration(ns) for ns in (0, 1500, 2_000_000, 90 * 10**9, 7200 * 10**9)] \
        == ["0ns", "1500ns", "2ms", "90s", "2h"]


def test_measure_args_of_a_timed_test() -> None:
    args = measure_args("cyclic", Traits(), duration_ns=10**10, warmup_ns=10**9,
                        thresholds_ns=(50_000, 100_000), params={"interval": "1ms"},
                        measure_cpus="2-3", simulate="7")
    assert args == ["cyclic", "--duration", "10s", "--warmup", "1s", "--threshold",
                    "50us,100us", "--cpus", "2-3", "--interval", "1ms", "--simulate", "7"]


def test_measure_args_policy_replaces_the_params_own() -> None:
    args = measure_args("cyclic", Traits(), duration_ns=10**9, warmup_ns=0,
                        thresholds_ns=(), params={"policy": "fifo", "priority": 90},
                        measure_cpus=None, policy="other")
    assert args == ["cyclic", "--duration", "1s", "--warmup", "0ns", "--policy", "other"]


def test_measure_args_of_an_untimed_test_on_one_cpu() -> None:
    pi = Traits(timed=False, warmup=False, thresholds=False, cpus="--cpu")
    args = measure_args("pi", pi, duration_ns=10**9, warmup_ns=10**9, thresholds_ns=(5,),
                        params={"iterations": 100, "no_pi": True, "quiet": False},
                        measure_cpus="3,1")
    assert args == ["pi", "--cpu", "1", "--iterations", "100", "--no-pi"]


def test_load_args_on_the_target_and_aimed_from_the_host() -> None:
    assert load_args("cpu", 50.0, {"work": "1ms"}, cpus="0-1") == [
        "load", "cpu", "--rate", "50", "--cpus", "0-1", "--work", "1ms"]
    assert load_args("net", "max", {}, cpus="0", flood_address="fe80::1", flood_port=9) == [
        "load", "net", "--rate", "max", "--target", "[fe80::1]:9", "--allow-remote"]
    assert load_args("net", 1e3, {}, flood_address="10.0.0.2", flood_port=9)[4:6] == [
        "--target", "10.0.0.2:9"]


def test_version_is_the_last_word_of_a_successful_call() -> None:
    assert version_of(Answer(0, "rtprobe 1.4.0\n")) == "1.4.0"
    assert version_of(Answer(0, "")) is None
    assert version_of(Answer(127, "sh: rtprobe: not found 1\n")) is None


def test_sysinfo_is_a_json_object_or_one_line_saying_why_not() -> None:
    assert sysinfo_of(Answer(0, '{"cpus": 4}')) == {"cpus": 4}
    with pytest.raises(ProbeAnswerError, match=r"failed \(exit 2\): bad option$"):
        sysinfo_of(Answer(2, "", "usage\nbad option\n"))
    with pytest.raises(ProbeAnswerError, match="invalid JSON"):
        sysinfo_of(Answer(0, "{"))
    with pytest.raises(ProbeAnswerError, match="not print a JSON object"):
        sysinfo_of(Answer(0, "[1]"))


def test_a_given_probe_serves_every_arch_and_the_host(tmp_path: Path) -> None:
    given = tmp_path / "rtprobe"
    given.write_text("#!/bin/sh\n")
    given.chmod(0o755)
    probes = Probes(given)
    assert probes.probe_for("armhf") == given
    assert probes.probe_for("riscv64") == given
    assert probes.host_probe() == given


def test_an_unknown_arch_is_unavailable_in_one_line() -> None:
    with pytest.raises(ProbeUnavailable, match="no probe for arch vax: .*use one of"):
        Probes().probe_for("vax")


def test_a_board_without_a_provider_cannot_get_a_probe() -> None:
    board = SshTarget("board.invalid")
    board._arch = "x86_64"  # what probe_arch() would have detected
    with pytest.raises(TargetError, match="no probe to push"):
        board._install_probe()


def raw_file(records: list[tuple[int, int, int, int]]) -> bytes:
    """A raw samples file as docs/schema.md lays it out."""
    head = b"RTPRAW01" + struct.pack("<IIQII", 32, 24, 1000, 1, 0)
    return head + b"".join(struct.pack("<QqII", *r) for r in records)


def test_raw_samples_per_series_without_warmup(tmp_path: Path) -> None:
    data = raw_file([(1, 5000, 0, 1), (2, 7000, 0, 0), (3, -40, 1, 0), (4, 9000, 0, 0)])
    assert parse_raw(data) == {0: [7000, 9000], 1: [0]}
    path = tmp_path / "samples.bin"
    path.write_bytes(data + b"\x00" * 10)  # a record cut short is not read
    assert read_raw(path) == {0: [7000, 9000], 1: [0]}
    assert parse_raw(b"NOTRAW01" + data[8:]) == {}
