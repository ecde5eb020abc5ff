"""A huge run's page in parts: at most PAGE_MEASUREMENTS measurements per page.

A legal 16 MB upload can hold 20,000 scenarios; its whole report took 27 s and 37 MB to
render.  The run page shows one part at a time — whole scenarios, a scenario with more
measurements than a page split over several — and says which part it is; the report of
the whole run stays available as `rtbench report` and its JSON at /api/v1/runs/ID.
"""

from __future__ import annotations

from dataclasses import replace

from rtbench.bundle import RunDetail, ScenarioDetail

PAGE_MEASUREMENTS = 200


def _pages(run: RunDetail) -> list[list[ScenarioDetail]]:
    """The run's scenarios cut into pages of at most PAGE_MEASUREMENTS measurements."""
    pages: list[list[ScenarioDetail]] = [[]]
    room = PAGE_MEASUREMENTS
    for scenario in run.scenarios:
        measurements = scenario.measurements
        if not measurements:
            pages[-1].append(scenario)
            continue
        start = 0
        while start < len(measurements):
            if room == 0:
                pages.append([])
                room = PAGE_MEASUREMENTS
            part = measurements[start:start + room]
            pages[-1].append(replace(scenario, measurements=part))
            start += len(part)
            room -= len(part)
    return pages


def page_count(run: RunDetail) -> int:
    """How many pages the run's page has (1 for every run of ordinary size)."""
    return len(_pages(run))


def run_part(run: RunDetail, page: int) -> RunDetail:
    """The run with only the scenarios (and measurements) of page (1-based); IndexError
    when there is no such page."""
    pages = _pages(run)
    if not 1 <= page <= len(pages):
        raise IndexError(page)
    return replace(run, scenarios=pages[page - 1])
