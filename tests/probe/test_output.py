"""One output path (probe/src/lib/output.c) for every record writer.

A write error -- stdout full or closed, a full disk under --output or --raw -- is exit 3
with one line naming the file, and a file given with --output/--raw is left as it was
(no truncated file renamed onto it, no temporary file left).  The temporary file is not
inherited by child processes (O_CLOEXEC) and new files follow the umask.  On a terminal
without --output the NDJSON is replaced by a human summary.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from probe_support import is_root, parse_ndjson

from tests.parts import needs_part, require_part

SIM = ("--simulate", "1:uniform,min=1us,max=900us")

# Each record writer, with arguments that write several records quickly.
WRITERS = {
    "cyclic": ["cyclic", *SIM, "--loops", "20000", "--policy", "other"],
    "load": ["load", "cpu", "--rate", "5", "--duration", "1s"],
    "hackbench": ["hackbench", "-g", "1", "-f", "2", "-l", "5"],
    "sysinfo": ["sysinfo"],
}


def run(rtprobe: Path, args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(rtprobe), *args], capture_output=True, text=True,
                          timeout=60, check=False, **kw)  # type: ignore[call-overload]


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_full_stdout_is_exit_3_with_one_line(rtprobe: Path, writer: str) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run([str(rtprobe), *WRITERS[writer]], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=60, check=False)
    assert done.returncode == 3, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if not ln.startswith("Time:")]
    assert len(lines) == 1 and "stdout" in lines[0] and "No space" in lines[0], done.stderr


def test_closed_stdout_is_exit_3_with_one_line(rtprobe: Path) -> None:
    proc = subprocess.Popen([str(rtprobe), *WRITERS["cyclic"]], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 3
    assert len(err.splitlines()) == 1 and "stdout" in err, err


@pytest.fixture()
def full_dir() -> Iterator[Path]:
    """A 256 KiB tmpfs of our own holding out.ndjson and samples.bin, then filled up."""
    if not is_root():
        require_part("root", "mounting a tmpfs needs root")
    mnt = Path(f"/tmp/rtprobe-full-{uuid.uuid4().hex[:8]}")
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "rtprobe-test", str(mnt)],
                   check=True)
    try:
        (mnt / "out.ndjson").write_text("previous run\n")
        (mnt / "samples.bin").write_bytes(b"old")
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(fd, b"x" * 1024):
                pass
        except OSError:
            pass
        os.close(fd)
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
        mnt.rmdir()


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_output_on_a_full_disk_leaves_the_file_as_it_was(rtprobe: Path, full_dir: Path,
                                                         writer: str) -> None:
    target = full_dir / "out.ndjson"
    done = run(rtprobe, [*WRITERS[writer], "--output", str(target)])
    assert done.returncode == 3, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if not ln.startswith("Time:")]
    assert len(lines) == 1 and str(target) in lines[0], done.stderr
    assert target.read_text() == "previous run\n"
    assert sorted(p.name for p in full_dir.iterdir()) == ["filler", "out.ndjson", "samples.bin"]


def test_raw_on_a_full_disk_is_exit_3_and_leaves_the_file(rtprobe: Path,
                                                          full_dir: Path) -> None:
    raw = full_dir / "samples.bin"
    done = run(rtprobe, [*WRITERS["cyclic"], "--raw", str(raw), "--output", "/dev/null"])
    assert done.returncode == 3, done.stderr
    assert len(done.stderr.splitlines()) == 1 and str(raw) in done.stderr
    assert raw.read_bytes() == b"old"
    assert sorted(p.name for p in full_dir.iterdir()) == ["filler", "out.ndjson", "samples.bin"]


def test_temporary_output_is_not_inherited_and_follows_the_umask(rtprobe: Path,
                                                                 tmp_path: Path) -> None:
    target = tmp_path / "run.ndjson"
    fds = tmp_path / "fds.txt"
    done = run(rtprobe, ["cyclic", *SIM, "--loops", "300", "--threshold", "800us",
                         "--policy", "other", "--on-spike", f"ls -l /proc/self/fd >> {fds}",
                         "--output", str(target)],
               preexec_fn=lambda: os.umask(0o077))
    assert done.returncode == 1, done.stderr  # spikes crossed the threshold
    assert fds.exists() and "run.ndjson" not in fds.read_text()
    assert (target.stat().st_mode & 0o777) == 0o600
    assert parse_ndjson(target.read_text())[-1]["type"] == "result"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fds.txt", "run.ndjson"]


@needs_part("util-linux", shutil.which("script") is None, "util-linux script missing")
def test_terminal_gets_a_summary_instead_of_ndjson(rtprobe: Path) -> None:
    cmd = f"{rtprobe} cyclic {' '.join(SIM)} --loops 2000 --policy other --threshold 850us"
    done = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 1
    out = done.stdout.replace("\r", "")
    assert '"schema"' not in out
    assert out.count("stdout is a terminal") == 1
    assert "summary" in out and "p99" in out and "overruns" in out
    assert "FAIL threshold 850us" in out and "status: fail" in out
    with_json = subprocess.run(["script", "-qec", cmd + " --json", "/dev/null"],
                               capture_output=True, text=True, timeout=60, check=False)
    assert '"type":"result"' in with_json.stdout and "stdout is a terminal" not in \
        with_json.stdout


@needs_part("util-linux", shutil.which("script") is None, "util-linux script missing")
@pytest.mark.parametrize(("args", "summary"), [
    (["load", "cpu", "--rate", "5", "--duration", "1s"], "rtprobe load cpu summary: achieved"),
    (["hackbench", "-g", "1", "-f", "2", "-l", "5"], "Time: "),
], ids=["load", "hackbench"])
def test_loads_and_hackbench_on_a_terminal_too(rtprobe: Path, args: list[str],
                                               summary: str) -> None:
    cmd = " ".join([str(rtprobe), *args])
    done = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout
    assert '"schema"' not in done.stdout and summary in done.stdout
    assert done.stdout.count("stdout is a terminal") == 1


def test_a_device_or_fifo_is_written_in_place(rtprobe: Path, tmp_path: Path) -> None:
    # A temporary file renamed onto /dev/null would replace the device with a plain file
    # (breaking every later shell redirect on the machine): devices and FIFOs are written
    # in place.  A FIFO of our own stands in for /dev/null's case too.
    import os
    import stat
    import threading

    before = os.stat("/dev/null")
    done = run(rtprobe, [*WRITERS["cyclic"], "--output", "/dev/null"])
    assert done.returncode == 0, done.stderr
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    fifo = tmp_path / "records.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    done = run(rtprobe, [*WRITERS["cyclic"], "--output", str(fifo)])
    reader.join(30)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert got and got[0].count(b"\n") >= 2 and b'"type":"result"' in got[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records.fifo"]
