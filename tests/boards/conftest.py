"""The board zoo's tests are `make test-boards`'s (RTBENCH_TEST_BOARDS=1): `make test`
(pytest over tests/) leaves them out, as each boots a guest of another CPU under
emulation for minutes (docs/testing.md)."""

import os

collect_ignore_glob = [] if os.environ.get("RTBENCH_TEST_BOARDS") == "1" else ["test_*.py"]
