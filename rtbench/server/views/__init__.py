"""What the server shows, as plain data: the one place for it.

The rule: a page or an endpoint shows what a module here computes; `server/pages.py`
(HTML, through one template per page) and `server/api.py` (JSON) only route a request,
call a view and render or serialise what it returns.  One module per area of the
dashboard: `runs.py` (the runs list, a run, comparisons, reference runs), `lab.py` (the
board x kernel matrix, the boards list, a board's history), `regressions.py` (the
regression board, and the check of an upload), `marks.py` (the extra marks of matrix
cells) and `paging.py` (a huge run's page in parts).  A new page's data goes into the
module of its area, or a new module here for a new area.
"""
