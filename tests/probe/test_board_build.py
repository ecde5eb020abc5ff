"""What makes the board build the native build with features left out, checked without
Zig: the help texts (probe/src/help.txt, its generator probe/tools/helpgen.py, packed for
board builds and unpacked by text_get() in C), the poisoned C library calls, and the cache
key of board builds."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from probe_support import REPO

from rtbench.rtprobe import build as probebuild
from tests.parts import needs_part

HELP_TXT = REPO / "probe" / "src" / "help.txt"


def load_helpgen() -> ModuleType:
    """probe/tools/helpgen.py as a module (it is a build script, not part of rtbench)."""
    spec = importlib.util.spec_from_file_location("helpgen", REPO / "probe/tools/helpgen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


helpgen = load_helpgen()
ascii_text = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E)
                     | st.just("\n"), max_size=300)


@given(st.lists(ascii_text, min_size=1, max_size=12))
@settings(max_examples=150, deadline=None)
def test_packed_texts_unpack_to_themselves(texts: list[str]) -> None:
    plain = [t.encode("ascii") for t in texts]
    pairs, packed = helpgen.choose_pairs(plain)
    assert len(pairs) <= helpgen.MAX_CODES
    for original, data in zip(plain, packed, strict=True):
        assert all(0 < c < helpgen.FIRST_CODE + len(pairs) for c in data)
        assert helpgen.unpack(data, pairs) == original
        assert len(data) <= len(original)


def test_help_txt_entries_are_the_ones_the_sources_use() -> None:
    """Every text is used by a descriptor, every macro a source names is defined."""
    entries = dict(helpgen.parse(HELP_TXT.read_text(encoding="ascii")))
    used: set[str] = set()
    for path in (REPO / "probe" / "src").rglob("*.c"):
        used |= set(re.findall(r"\b(?:HELP|INTRO|EXAMPLES)_[A-Z0-9_]+\b", path.read_text()))
    used -= {"HELP_PAIRS", "HELP_PAIR_COUNT"}
    assert used == set(entries)
    assert len(entries) > 100
    assert entries["HELP_CYCLIC_INTERVAL"] == (b"period, equal for every thread "
                                               b"(default 1000us;\nbare number: us)")
    assert entries["EXAMPLES_CYCLIC"].endswith(b"--loops 1000\n")


def test_entry_ends_before_the_newline_of_the_next_header() -> None:
    source = "# comment\n\n@ HELP_A\none\ntwo\n@ INTRO_B\nends in a newline\n\n@ C\n\n"
    assert helpgen.parse(source) == [("HELP_A", b"one\ntwo"),
                                     ("INTRO_B", b"ends in a newline\n"), ("C", b"")]


@pytest.mark.parametrize(("source", "message"), [
    ("@ help_a\nx\n", "does not name a macro"),
    ("@ A\nx\n@ A\ny\n", "A is defined twice"),
    ("stray\n@ A\nx\n", "text before the first"),
    ("@ A\ncaf\u00e9\n", "not printable ASCII"),
    ("@ A\ntab\there\n", "not printable ASCII"),
    ("@ A\nx", "no newline"),
    ("@ A\n" + "x" * 2048 + "\n", "TEXT_MAX"),
])
def test_bad_help_txt_is_refused_in_one_line(source: str, message: str) -> None:
    with pytest.raises(helpgen.HelpTextError, match=message) as caught:
        helpgen.parse(source)
    assert "\n" not in str(caught.value)


def test_generator_writes_the_header_and_fails_cleanly(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("@ A\ncaf\u00e9\n", encoding="utf-8")
    out = tmp_path / "help.h"
    done = subprocess.run(["python3", str(REPO / "probe/tools/helpgen.py"), str(bad), str(out)],
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert not out.exists() and list(tmp_path.iterdir()) == [bad]
    usage = subprocess.run(["python3", str(REPO / "probe/tools/helpgen.py")],
                           capture_output=True, text=True, timeout=30, check=False)
    assert usage.returncode == 2 and "usage:" in usage.stderr


@needs_part("cc", shutil.which("cc") is None, "needs a C compiler")
@pytest.mark.parametrize("packed", [False, True])
def test_text_get_gives_back_every_text(tmp_path: Path, packed: bool) -> None:
    """lib/text.c unpacks every text of the packed header (and passes plain ones through)."""
    entries = helpgen.parse(HELP_TXT.read_text(encoding="ascii"))
    (tmp_path / "help.h").write_text(helpgen.header(entries, packed), encoding="ascii")
    calls = "".join(f'\tputs(text_get({key}, buf, sizeof(buf)));\n\tputs("@@");\n'
                    for key, _ in entries)
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include "text.h"\n#include "help.h"\n'
        f"int main(void)\n{{\n\tchar buf[TEXT_MAX];\n\n{calls}\treturn 0;\n}}\n")
    lib = REPO / "probe" / "src" / "lib"
    binary = tmp_path / "texts"
    subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", f"-I{tmp_path}", f"-I{lib}", "-o",
                    str(binary), str(tmp_path / "main.c"), str(lib / "text.c")],
                   check=True, timeout=60)
    printed = subprocess.run([str(binary)], capture_output=True, check=True, timeout=30).stdout
    assert printed == b"".join(text + b"\n@@\n" for _, text in entries)
    header = (tmp_path / "help.h").read_text(encoding="ascii")
    assert ("#define HELP_PAIR_COUNT 0" in header) is not packed


def test_packing_saves_bytes() -> None:
    entries = helpgen.parse(HELP_TXT.read_text(encoding="ascii"))
    pairs, packed = helpgen.choose_pairs([text for _, text in entries])
    assert len(pairs) == helpgen.MAX_CODES
    assert sum(map(len, packed)) + 2 * len(pairs) < 0.6 * sum(len(t) for _, t in entries)


# One file of each kind of build input, relative to probe/ (the Python code is separate).
PROBE_INPUTS = ["src/lib/fmt.c", "src/lib/fmt.h", "src/help.txt", "tools/helpgen.py",
                "Makefile", "port/softfloat_compare.c"]


@pytest.fixture()
def probe_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of probe/ and of the Python build code, hashed instead of the originals."""
    shutil.copytree(REPO / "probe", tmp_path / "probe",
                    ignore=shutil.ignore_patterns("build", "__pycache__"))
    code = []
    for path in probebuild.BUILD_CODE:
        copy = tmp_path / "code" / path.name
        copy.parent.mkdir(exist_ok=True)
        copy.write_bytes(path.read_bytes())
        code.append(copy)
    monkeypatch.setattr(probebuild, "BUILD_CODE", tuple(code))
    return tmp_path / "probe"


@pytest.mark.parametrize("name", PROBE_INPUTS)
def test_a_changed_probe_input_changes_the_digest(probe_copy: Path, name: str) -> None:
    before = probebuild.source_digest(probe_copy)
    path = probe_copy / name
    assert path in probebuild.build_inputs(probe_copy)
    path.write_bytes(path.read_bytes() + b"\n")
    assert probebuild.source_digest(probe_copy) != before


def test_a_new_source_file_changes_the_digest(probe_copy: Path) -> None:
    before = probebuild.source_digest(probe_copy)
    (probe_copy / "src" / "lib" / "new.h").write_text("/* new */\n")
    assert probebuild.source_digest(probe_copy) != before


@pytest.mark.parametrize("index", range(len(probebuild.BUILD_CODE)))
def test_a_changed_build_module_changes_the_digest(probe_copy: Path, index: int) -> None:
    """The build module and elftrim (whose trimming shapes the cached binary) alike."""
    before = probebuild.source_digest(probe_copy)
    path = probebuild.BUILD_CODE[index]
    path.write_text(path.read_text() + "\n# changed\n")
    assert probebuild.source_digest(probe_copy) != before


def test_changed_flags_change_the_digest(probe_copy: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiler flags and the Makefile variables of the board variant."""
    cflags = probebuild.SMALL_CFLAGS
    before = probebuild.source_digest(probe_copy)
    monkeypatch.setattr(probebuild, "SMALL_CFLAGS", cflags + " -O2")
    other_cflags = probebuild.source_digest(probe_copy)
    monkeypatch.setattr(probebuild, "SMALL_CFLAGS", cflags)
    monkeypatch.setattr(probebuild, "BOARD_MAKE_ARGS", ("STATIC=1",))
    assert len({before, other_cflags, probebuild.source_digest(probe_copy)}) == 3


def test_arch_flags_change_the_arch_digest() -> None:
    spec = probebuild.get_arch("mips")
    other = probebuild.ProbeArch(**{**spec.__dict__, "cflags": "-mno-relax"})
    assert probebuild.arch_digest(spec) != probebuild.arch_digest(other)


POISON_H = REPO / "probe" / "src" / "lib" / "poison.h"


@needs_part("cc", shutil.which("cc") is None, "needs a C compiler")
@pytest.mark.parametrize(("call", "poisoned"), [
    ('printf("%d", 1)', True), ('fprintf(stderr, "x")', True),
    ('snprintf(buf, sizeof(buf), "x")', True), ("strtoll(buf, NULL, 10)", True),
    ("(long)strtod(buf, NULL)", True), ("atoi(buf)", True), ('sscanf(buf, "%d", &n)', True),
    ("getopt_long(0, NULL, \"\", NULL, NULL)", True), ("inet_pton(2, buf, buf)", True),
    ("strsignal(2) != NULL", True), ("qsort(buf, 1, 1, NULL), 0", True),
    ("(int)sqrt(2.0)", True), ("fputs(buf, stdout)", False), ("(int)strlen(buf)", False),
])
def test_replaced_libc_calls_fail_the_build(tmp_path: Path, call: str, poisoned: bool) -> None:
    """A source compiled as the Makefile compiles rtprobe's: a replaced call is an error."""
    source = tmp_path / "new.c"
    source.write_text("#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
                      "#include <string.h>\n"
                      "#include <getopt.h>\n#include <arpa/inet.h>\n"
                      f"int f(void);\nint f(void)\n{{\n\tchar buf[8] = \"1\";\n\tint n = 0;\n\n"
                      f"\treturn (int)({call}) + n;\n}}\n")
    done = subprocess.run(["cc", "-std=c11", "-D_GNU_SOURCE", "-include", str(POISON_H),
                           "-c", "-o", str(tmp_path / "new.o"), str(source)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode != 0) is poisoned, done.stderr
    assert ("poisoned" in done.stderr) is poisoned, done.stderr


def test_makefile_compiles_every_source_with_the_poison() -> None:
    makefile = (REPO / "probe" / "Makefile").read_text()
    assert "POISON := -include src/lib/poison.h" in makefile
    assert "$(CC) $(WARN) $(CPPFLAGS_ALL) $(POISON)" in makefile


def test_awk_writes_the_plain_header_helpgen_writes(tmp_path: Path) -> None:
    # native builds make help.h with awk (no Python needed to build rtprobe on a machine)
    by_python = tmp_path / "py.h"
    assert helpgen.main([str(HELP_TXT), str(by_python)]) == 0
    done = subprocess.run(["awk", "-f", str(REPO / "probe/tools/helpgen.awk"), str(HELP_TXT)],
                          capture_output=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == by_python.read_bytes()


def test_awk_refuses_text_before_the_first_entry(tmp_path: Path) -> None:
    bad = tmp_path / "help.txt"
    bad.write_text("stray text\n@ HELP_X\nx\n", encoding="ascii")
    done = subprocess.run(["awk", "-f", str(REPO / "probe/tools/helpgen.awk"), str(bad)],
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "before the first '@ NAME'" in done.stderr
