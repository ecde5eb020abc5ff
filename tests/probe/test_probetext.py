"""The help-text packer of the board builds: what it packs unpacks to the same bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtbench.probebuild import PROBE_SOURCE
from rtbench.probetext import (
    FIRST_CODE,
    TextPackError,
    c_literal,
    choose_pairs,
    pack_tree,
    parse_literals,
    unpack,
)

ascii_text = st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=0x7F), max_size=300)


@given(st.lists(ascii_text, min_size=1, max_size=12))
@settings(max_examples=150, deadline=None)
def test_packed_texts_unpack_to_themselves(texts: list[str]) -> None:
    plain = [t.encode("ascii") for t in texts]
    pairs, packed = choose_pairs(plain)
    assert len(pairs) <= 128
    for original, codes in zip(plain, packed, strict=True):
        assert all(0 < c < FIRST_CODE + len(pairs) for c in codes)
        assert unpack(bytes(codes), pairs) == original


@given(st.binary(min_size=0, max_size=200).filter(lambda b: b"\0" not in b))
def test_c_literal_reads_back(data: bytes) -> None:
    """The literal written for packed bytes holds exactly them (octal escapes cannot run on)."""
    literal = c_literal(data)
    assert literal.isascii()
    decoded = bytearray()
    body, i = literal[1:-1], 0
    while i < len(body):
        if body[i] != "\\":
            decoded.append(ord(body[i]))
            i += 1
        elif body[i + 1] in "01234567":
            decoded.append(int(body[i + 1:i + 4], 8))
            i += 4
        else:
            decoded.append({"n": 10, '"': 34, "\\": 92}[body[i + 1]])
            i += 2
    assert bytes(decoded) == data


def test_literals_are_joined_and_unescaped() -> None:
    assert parse_literals('"a\\tb\\n"\n   "say \\"hi\\"\\\\"') == b'a\tb\nsay "hi"\\'


def test_non_ascii_help_is_refused() -> None:
    with pytest.raises(TextPackError, match="not plain ASCII"):
        parse_literals('"caf\u00e9"')
    with pytest.raises(TextPackError, match="escape"):
        parse_literals('"\\x41"')


def test_the_probe_sources_pack_smaller(tmp_path: Path) -> None:
    report = pack_tree(PROBE_SOURCE, tmp_path / "probe")
    assert report.texts > 100 and report.codes == 128
    assert report.packed_bytes < 0.6 * report.plain_bytes
    header = (tmp_path / "probe" / "src" / "lib" / "text_pairs.h").read_text()
    assert "#define TEXT_PAIRS 128" in header
    # only the copy changed: the sources keep their plain texts
    assert "#define TEXT_PAIRS 0" in (PROBE_SOURCE / "src" / "lib" / "text_pairs.h").read_text()
