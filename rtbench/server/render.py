"""Jinja2 rendering of the server's pages (autoescaped; the report's filters)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from rtbench.report import format as fmt
from rtbench.report.run_markers import run_markers


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The environment over rtbench/server/templates; every value is escaped."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, finalize=fmt.fmt_template_value)
    env.filters.update(us=fmt.fmt_us, count=fmt.fmt_count, markers=run_markers)
    return env


def render_page(name: str, **context: Any) -> str:
    """The page called name rendered with context."""
    return environment().get_template(name).render(**context)
