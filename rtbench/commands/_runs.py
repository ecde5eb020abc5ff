"""The one run resolver every command uses: ids, latest, latest~N, selectors, ref:NAME."""

from __future__ import annotations

from typing import Any

from rtbench import EXIT_USAGE
from rtbench.analysis.compare import RunView, view_of_reference, view_of_run
from rtbench.analysis.select import SelectError, parse_spec, resolve, resolve_one
from rtbench.commands._common import fail
from rtbench.reference import reference_run, reference_runs

RUN_HELP = ("RUN: an id, latest, latest~N, a selector such as host=box,kernel~rt "
            "(keys board host kernel suite status simulated, else a tag; = equal, ~ contains, "
            "!= differs, !~ does not contain) or ref:NAME for a published reference run.")


def _all_runs(store: Any) -> list[Any]:
    """Every stored run's summary."""
    return list(store.list_runs(limit=2**62))


def stored_id(store: Any, text: str) -> int:
    """The one stored run text names (exit 2 on a bad name or several matches)."""
    try:
        spec = parse_spec(text)
        if spec.kind == "ref":
            fail(f"{text}: a published reference run is not stored; "
                 f"'rtbench ref show {spec.ref}' shows it", EXIT_USAGE)
        return resolve_one(spec, _all_runs(store))
    except SelectError as exc:
        fail(str(exc), EXIT_USAGE)


def resolve_all(store: Any, texts: tuple[str, ...] | list[str]) -> list[Any]:
    """Stored run ids and ReferenceRuns the texts name, in order (a selector adds all its
    matches, oldest first); the same run named twice is kept once."""
    out: list[Any] = []
    seen: set[str] = set()
    summaries: list[Any] | None = None
    for text in texts:
        try:
            spec = parse_spec(text)
            if spec.kind == "ref":
                ref = reference_run(spec.ref)
                if ref is None:
                    names = ", ".join(r.name for r in reference_runs())
                    fail(f"{text}: no such reference run; use one of {names}", EXIT_USAGE)
                found: list[Any] = [ref]
            else:
                if summaries is None:
                    summaries = _all_runs(store)
                found = list(resolve(spec, summaries))
        except SelectError as exc:
            fail(str(exc), EXIT_USAGE)
        for item in found:
            label = f"run {item}" if isinstance(item, int) else f"ref:{item.name}"
            if label not in seen:
                seen.add(label)
                out.append(item)
    return out


def views(store: Any, texts: tuple[str, ...] | list[str]) -> list[RunView]:
    """RunViews of every run the texts name (see resolve_all)."""
    return [view_of_run(store.get_run(item)) if isinstance(item, int)
            else view_of_reference(item) for item in resolve_all(store, texts)]
