"""A huge run's page in parts: at most PAGE_MEASUREMENTS measurements per page.

A legal 16 MB upload can hold 20,000 scenarios; its whole report took 27 s and 37 MB to
render.  The run page shows one part at a time — whole scenarios, a scenario with more
measurements than a page split over several — and says which part it is; the report of
the whole run stays available as `rtbench report` and its JSON at /api/v1/runs/ID.
Pages are planned from the run's outline (scenario ids and measurement counts), so that
only the part shown is read from the database.
"""

from __future__ import annotations

PAGE_MEASUREMENTS = 100

# one page: {scenario id: (first measurement, end)} in the store's get_run(parts=) form
Part = dict[int, tuple[int, int]]


def plan_pages(outline: list[tuple[int, int]]) -> list[Part]:
    """The run's scenarios ((id, measurement count) in order) cut into pages of at most
    PAGE_MEASUREMENTS measurements; a scenario without measurements joins the page it
    falls on."""
    pages: list[Part] = [{}]
    room = PAGE_MEASUREMENTS
    for scenario_id, count in outline:
        if not count:
            pages[-1][scenario_id] = (0, 0)
            continue
        start = 0
        while start < count:
            if room == 0:
                pages.append({})
                room = PAGE_MEASUREMENTS
            end = min(count, start + room)
            pages[-1][scenario_id] = (start, end)
            room -= end - start
            start = end
    return pages
