"""The text packer of the board builds: what it packs unpacks to the same bytes, and a
format string keeps its conversions."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtbench.probebuild import PROBE_SOURCE
from rtbench.probetext import (
    FIRST_CODE,
    TextPackError,
    bytes_of,
    c_literal,
    choose_pairs,
    code_only,
    conversion_end,
    pack_tree,
    packable_spans,
    parse_literals,
    tokens_of,
    unpack,
)

ascii_text = st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=0x7F), max_size=300)


@given(st.lists(st.tuples(ascii_text, st.booleans()), min_size=1, max_size=12))
@settings(max_examples=150, deadline=None)
def test_packed_texts_unpack_to_themselves(texts: list[tuple[str, bool]]) -> None:
    """Help texts and format strings alike; a format's conversions stay as they are."""
    plain = [(t.encode("ascii"), is_format) for t, is_format in texts]
    pairs, packed = choose_pairs([tokens_of(text, is_format) for text, is_format in plain])
    assert len(pairs) <= 128
    for (original, is_format), tokens in zip(plain, packed, strict=True):
        data = bytes_of(tokens)
        assert all(0 < c < FIRST_CODE + len(pairs) for c in data)
        assert unpack(data, pairs) == original
        if is_format:   # every conversion is still there, byte for byte
            assert _conversions(data) == _conversions(original)


def _conversions(text: bytes) -> list[bytes]:
    """The conversions of a format string, as fmt.c reads them."""
    found, i = [], 0
    while i < len(text):
        if text[i] == ord("%"):
            end = conversion_end(text, i)
            found.append(text[i:end])
            i = end
        else:
            i += 1
    return found


def test_conversions_are_read_as_fmt_reads_them() -> None:
    text = b"a %-10s|%5.1f%%|%*.*s|%lld|%zu|% b|%"
    assert _conversions(text) == [b"%-10s", b"%5.1f", b"%%", b"%*.*s", b"%lld", b"%zu",
                                  b"% b", b"%"]


def test_spans_of_fields_and_format_calls() -> None:
    source = (
        '/* fmt_fprintf(stderr, "in a comment"); */\n'
        'static const struct opt_desc d[] = {{ .name = "x", .help = "the help"\n'
        '    " text" }};\n'
        'void f(char *b) { fmt_snprintf(b, sizeof(b), "%d, (x)", g(1, 2));\n'
        '  fmt_fprintf(stderr, fmt, 1); fmt_printf("plain %s\\n", "arg"); }\n')
    texts = [(source[a:b], is_format) for a, b, is_format in packable_spans(code_only(source))]
    assert texts == [('"the help"\n    " text"', False), ('"%d, (x)"', True),
                     ('"plain %s\\n"', True)]
    assert len(code_only(source)) == len(source)


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
    assert report.texts > 400 and report.codes == 128
    assert report.packed_bytes < 0.6 * report.plain_bytes
    header = (tmp_path / "probe" / "src" / "lib" / "text_pairs.h").read_text()
    assert "#define TEXT_PAIRS 128" in header
    # only the copy changed: the sources keep their plain texts
    assert "#define TEXT_PAIRS 0" in (PROBE_SOURCE / "src" / "lib" / "text_pairs.h").read_text()


def test_non_ascii_literal_in_the_sources_is_refused(tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    (probe / "src" / "lib").mkdir(parents=True)
    (probe / "src" / "lib" / "a.c").write_text('const char *s = "5 \u00b5s";\n')
    with pytest.raises(TextPackError, match="not ASCII"):
        pack_tree(probe, tmp_path / "out")
