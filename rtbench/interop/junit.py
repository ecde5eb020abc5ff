"""JUnit XML: one testcase per cell, failed verdicts as failures, figures as properties.

The JUnit schema Jenkins, GitLab and GitHub read (tests/host/data/junit/junit-10.xsd)
allows properties only on a testsuite, so each cell's figures are testsuite
properties named "<scenario>.<test>.<series>.<figure>_us" and repeated in the
testcase's system-out.  A percentile the data cannot give is "n/a".
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from rtbench.bundle import RunDetail
from rtbench.interop._cells import cells, figures, safe_name
from rtbench.interop.base import Exporter

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _x(text: object) -> str:
    """Text without characters XML 1.0 cannot carry."""
    return _NOT_XML.sub("?", str(text))


def _us(value: float | None) -> str:
    """A figure in us, or n/a."""
    return "n/a" if value is None else f"{value:.3f}"


class JunitExporter(Exporter):
    """JUnit XML for CI engines."""

    name = "junit"
    summary = "JUnit XML: a testcase per cell, verdicts as pass/fail, figures as properties"
    suffix = ".xml"

    def export(self, run: RunDetail) -> bytes:
        """The run as a <testsuites> document."""
        all_cells = list(cells(run))
        failures = sum(1 for c in all_cells if not c.passed and not c.errored)
        errors = sum(1 for c in all_cells if c.errored)
        root = ET.Element("testsuites", name=_x(f"rtbench {run.suite}"),
                          tests=str(len(all_cells)), failures=str(failures),
                          errors=str(errors))
        suite = ET.SubElement(root, "testsuite", name=_x(run.suite),
                              tests=str(len(all_cells)), failures=str(failures),
                              errors=str(errors), hostname=_x(run.hostname),
                              timestamp=run.started_at.isoformat(), id=_x(run.uid))
        props = ET.SubElement(suite, "properties")
        for key, value in (("run.id", run.id), ("run.uid", run.uid),
                           ("run.kernel", run.kernel), ("run.arch", run.arch),
                           ("run.status", run.status),
                           ("run.simulated", "true" if run.simulated else "false"),
                           *((f"run.tag.{k}", v) for k, v in sorted(run.tags.items()))):
            if value is not None:  # an unknown kernel or arch is left out, not "None"
                ET.SubElement(props, "property", name=_x(key), value=_x(value))
        for cell in all_cells:
            m = cell.measurement
            lines = []
            for series, stats in cell.per_series:
                base = safe_name(cell.scenario.name, m.name, series.label)
                ET.SubElement(props, "property", name=f"{base}.samples",
                              value=str(stats.samples))
                ET.SubElement(props, "property", name=f"{base}.overruns",
                              value=str(stats.overruns))
                parts = []
                for figure, value in figures(stats):
                    ET.SubElement(props, "property", name=f"{base}.{figure}_us",
                                  value=_us(value))
                    parts.append(f"{figure}={_us(value)}")
                lines.append(f"{_x(series.label)}: samples={stats.samples} "
                             f"overruns={stats.overruns} " + " ".join(parts) + " (us)")
            seconds = (m.elapsed_ns or m.measured_ns or 0) / 1e9
            case = ET.SubElement(suite, "testcase", name=_x(m.name),
                                 classname=_x(f"rtbench.{run.suite}.{cell.scenario.name}"),
                                 time=f"{seconds:.3f}")
            if cell.errored:
                ET.SubElement(case, "error", type=_x(m.status),
                              message=_x(m.reason or m.status))
            elif not cell.passed:
                failed = [str(v.get("name")) for v in m.verdicts
                          if isinstance(v, dict) and not v.get("pass", True)]
                ET.SubElement(case, "failure", type=_x(m.status),
                              message=_x("; ".join(failed) or m.reason or m.status))
            if cell.summary_only:
                lines.append("summary only: the source gave no distribution, "
                             "percentiles are n/a")
            out = ET.SubElement(case, "system-out")
            out.text = _x("\n".join(lines))
        ET.indent(root)
        text: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
        return text + b"\n"
