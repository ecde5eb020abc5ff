"""One writer per format and one template per page (issue 38): cyclictest's JSON layout
and the Prometheus/OpenMetrics text are each written by one module that every caller
uses, and no two templates share a name."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "rtbench"


def code_with(marker: str) -> list[str]:
    """The modules of rtbench/ whose code (not only their docs) holds marker."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = [line for line in path.read_text(encoding="utf-8").splitlines()
                 if marker in line and not line.lstrip().startswith(("#", '"""'))]
        if lines:
            found.append(str(path.relative_to(PACKAGE)))
    return found


def test_cyclictest_json_has_one_writer() -> None:
    # the layout's own keys: written by rttestsjson.py, read by the importer (_build.py)
    assert code_with('"cmdline:": ') == ["interop/rttestsjson.py"]
    assert code_with('"rt_test_version:": ') == ["interop/rttestsjson.py"]


def test_openmetrics_text_has_one_writer() -> None:
    assert code_with('"# EOF"') == ["interop/_exposition.py"]
    assert code_with("OPENMETRICS_TYPE if") == ["interop/openmetrics.py"]


def test_one_template_per_page() -> None:
    names = [path.name for path in PACKAGE.rglob("*.j2")]
    assert sorted(name for name in set(names) if names.count(name) > 1) == []
