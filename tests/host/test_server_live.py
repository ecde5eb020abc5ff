"""A live `rtbench serve` over PostgreSQL on a free loopback port: a real browser
(Debian's chromium + chromedriver through Selenium), schemathesis against the
OpenAPI document, 8 concurrent uploaders, a 1 GB body, and `rtbench push`."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from pg_cluster import cluster
from server_helpers import bundle, checksum, free_port, store_synthetic

from bench.lab_data import make_lab, write_lab
from rtbench.analysis.kernelver import kernel_sort_key
from rtbench.interop.runjson import dumps
from rtbench.report.format import fmt_us
from rtbench.store import Store
from rtbench.store.tokens import create_token
from tests.cli_inprocess import run_in_process
from tests.conftest import REPO
from tests.parts import require_part

XSS = "<script>alert(1)</script>"
LAB = make_lab(4, 3, 2)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory):
    """(base URL, db URL, token) of a running `rtbench serve` seeded with runs."""
    url = cluster().fresh_database()
    with Store.open(url) as store:
        token = create_token(store, "live")
        write_lab(store, LAB)  # real runs with a planted regression (issue 26), oldest
        for host, kernel, suite in (("board-a", "6.1-rt", "smoke"), ("board-a", "6.6-rt",
                                    "smoke"), ("board-b", "6.1-rt", "smoke"),
                                    ("board-b", "6.1-rt", XSS)):
            store.add_bundle(bundle(hostname=host, kernel=kernel, suite=suite))
    port = free_port()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "rtbench", "serve", "--db", url,
                                 "--bind", f"127.0.0.1:{port}"], stdout=out, stderr=out)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{base}/api/v1/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail(f"rtbench serve did not start: {log.read_text()}")
    yield base, url, token, proc.pid
    proc.terminate()
    proc.wait(20)
    assert "Traceback" not in log.read_text()


def _driver(tmp_path: Path):
    """Headless Debian chromium driven by /usr/bin/chromedriver."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        require_part("chromium", "chromium / chromium-driver are not installed")
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or ""
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--disable-gpu", "--window-size=1300,1000",
                f"--user-data-dir={tmp_path / 'chrome-profile'}"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver") or ""),
                            options=options)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless chromium for the module's browser tests (each start of one cost
    about a CPU-second); each test sets the window size it needs."""
    driver = _driver(tmp_path_factory.mktemp("chrome"))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.mark.browser
def test_browser(live, browser: Any, tmp_path: Path) -> None:
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    base, url, _, _ = live
    with Store.open(url) as store:
        expected = {r.id: r for r in store.list_runs(limit=100)}
    driver = browser
    driver.set_window_size(1300, 1000)
    try:
        driver.get(f"{base}/runs")
        driver.save_screenshot(str(tmp_path / "runs.png"))
        rows = driver.find_elements(By.CSS_SELECTOR, "#runs tr[data-run]")
        assert len(rows) >= 4
        for row in rows:  # the numbers a user sees are the store's
            run_id = int(row.get_attribute("data-run") or 0)
            worst = row.find_element(By.CSS_SELECTOR, "td.worst").text
            assert worst == fmt_us(expected[run_id].worst_max_ns)
        suites = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#runs td.suite")]
        assert any(XSS in s for s in suites)  # shown as text
        with pytest.raises(NoAlertPresentException):
            driver.switch_to.alert.text  # noqa: B018 - no dialog opened
        Select(driver.find_element(By.NAME, "host")).select_by_visible_text("board-a")
        driver.find_element(By.ID, "apply").click()
        driver.save_screenshot(str(tmp_path / "filtered.png"))
        assert "2 runs match" in driver.find_element(By.ID, "total").text
        boxes = driver.find_elements(By.CSS_SELECTOR, "#runs input[type=checkbox]")
        for box in boxes:
            box.click()
        driver.find_element(By.ID, "compare").click()
        driver.save_screenshot(str(tmp_path / "compare.png"))
        assert "/compare?" in driver.current_url
        _check_comparison(driver, base)
        driver.get(f"{base}/runs/{max(r.id for r in expected.values() if r.hostname == 'board-a')}")
        driver.save_screenshot(str(tmp_path / "run.png"))
        assert "rtbench run" in driver.find_element(By.TAG_NAME, "h1").text
        assert driver.find_elements(By.CSS_SELECTOR, "figure svg")
        driver.get(f"{base}/matrix?simulated=1")
        driver.save_screenshot(str(tmp_path / "matrix-simulated.png"))
        text = driver.find_element(By.TAG_NAME, "body").text
        assert "board-a" in text and "6.6-rt" in text and XSS in text
        _check_planted_regression(driver, base, tmp_path)
        with pytest.raises(NoAlertPresentException):
            driver.switch_to.alert.text  # noqa: B018
        _check_reference_runs(driver, base, expected, tmp_path)
        with pytest.raises(NoAlertPresentException):
            driver.switch_to.alert.text  # noqa: B018
    finally:  # the next test starts from no page of this one (a failure here is not news)
        with contextlib.suppress(Exception):
            driver.get("about:blank")
    assert (tmp_path / "matrix.png").stat().st_size > 1000


def _check_planted_regression(driver, base: str, tmp_path: Path) -> None:
    """The matrix shows the planted regression red on its board from its kernel on, and
    the board's history page draws it (issue 26)."""
    from selenium.webdriver.common.by import By

    driver.get(f"{base}/matrix")
    driver.save_screenshot(str(tmp_path / "matrix.png"))
    red = driver.find_elements(By.CSS_SELECTOR, "table.matrix td.over")
    regressed = list(LAB.kernel_names[LAB.regressed_from:])
    assert sorted(((td.get_attribute("data-board"), td.get_attribute("data-kernel"))
                   for td in red), key=lambda bk: kernel_sort_key(bk[1])) == [
        (LAB.planted_board, k) for k in regressed]
    assert "180.0" in red[0].text and "+" in red[0].text
    assert "board-a" not in driver.find_element(By.TAG_NAME, "body").text  # simulated
    heads = [th.text for th in driver.find_elements(By.CSS_SELECTOR, "table.matrix tr th")]
    assert heads[1:1 + LAB.kernels] == sorted(LAB.kernel_names, key=kernel_sort_key)
    driver.get(f"{base}/boards/{LAB.planted_board}")
    for summary in driver.find_elements(By.CSS_SELECTOR, "section.history summary"):
        summary.click()
    driver.save_screenshot(str(tmp_path / "history.png"))
    section = driver.find_elements(By.CSS_SELECTOR, "section.history")[0]
    assert section.get_attribute("data-cell") == "idle / cyclic / cpu0"
    assert len(section.find_elements(By.CSS_SELECTOR, "line.kernel-change")) == LAB.kernels
    rows = section.find_elements(By.CSS_SELECTOR, "table tr")[1:]
    regressed_rows = [r.text for r in rows if "180.0" in r.text]
    assert len(regressed_rows) == LAB.runs * len(regressed)
    assert all(any(k in r for k in regressed) for r in regressed_rows)
    assert (tmp_path / "history.png").stat().st_size > 1000


VERDICTS = ("better", "worse", "no detectable difference", "no interval")


def _check_comparison(driver, base: str) -> None:
    """The compare page is the comparison report: the verdicts the analysis gives."""
    from urllib.parse import urlsplit

    from selenium.webdriver.common.by import By

    assert "comparison of 2 runs" in driver.find_element(By.TAG_NAME, "h1").text
    body = driver.find_element(By.TAG_NAME, "body").text
    assert "Environment" in body and "6.1-rt" in body and "6.6-rt" in body
    api = httpx.get(f"{base}/api/v1/compare?{urlsplit(driver.current_url).query}").json()
    want = [d["verdict"] for row in api["cells"] for d in row["differences"][1]]
    shown = [td.text.split(" (")[0] for td in driver.find_elements(By.CSS_SELECTOR, "td")
             if td.text.split(" (")[0] in VERDICTS]
    assert want and shown == want
    assert driver.find_elements(By.CSS_SELECTOR, "figure svg")


def _check_reference_runs(driver, base: str, expected: dict, tmp_path: Path) -> None:
    """Reference runs page, one reference, and a comparison beside the XSS-named run."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from rtbench.reference import reference_runs

    driver.get(f"{base}/refs")
    driver.save_screenshot(str(tmp_path / "refs.png"))
    rows = driver.find_elements(By.CSS_SELECTOR, "#refs tr[data-ref]")
    assert [r.get_attribute("data-ref") for r in rows] == [r.name for r in reference_runs()]
    assert XSS in driver.find_element(By.ID, "stored").text
    driver.find_element(By.LINK_TEXT, "ref:loongson2f").click()
    driver.save_screenshot(str(tmp_path / "ref.png"))
    figures = driver.find_element(By.ID, "figures").text
    loongson = next(r for r in reference_runs() if r.name == "loongson2f")
    for cell in loongson.cells:
        assert fmt_us(cell.figures_ns["max"]) in figures
    xss_run = next(r.id for r in expected.values() if r.suite == XSS)
    Select(driver.find_element(By.ID, "stored-run")).select_by_value(str(xss_run))
    driver.find_element(By.ID, "compare").click()
    driver.save_screenshot(str(tmp_path / "compare-ref.png"))
    body = driver.find_element(By.TAG_NAME, "body").text
    assert "ref:loongson2f" in body and "published" in body and XSS in body
    assert "no interval" in body  # a paper's figures have no distribution to resample


def test_schemathesis(live, tmp_path: Path) -> None:
    base, _, _, _ = live
    cli = Path(sys.executable).parent / "schemathesis"
    if not cli.exists():
        require_part("python-dev", "schemathesis is not installed (pip install -e '.[dev]')")
    done = subprocess.run(
        [str(cli), "run", f"{base}/api/v1/openapi.json", "--checks",
         "not_a_server_error,status_code_conformance,content_type_conformance",
         "--max-examples", "12", "--workers", "2", "--phases", "examples,coverage,fuzzing",
         "--max-time", "30", "--suppress-health-check", "all"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
        env=dict(os.environ, SCHEMATHESIS_HOOKS=""))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


# 8 threads of 20 uploads each: every thread still uploads while the others do, which is
# what the test proves (no upload lost, refused or mixed with another); 50 each took 2.5x
# as long and proved nothing more.
UPLOADERS = 8
UPLOADS_EACH = 20


def test_eight_concurrent_uploaders(live) -> None:
    import hashlib
    import json
    import uuid

    base, url, token, _ = live
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    template = json.loads(dumps(bundle()))

    def uploader(worker: int) -> list[tuple[str, str, int]]:
        sent = []
        doc = dict(template, hostname=f"load-{worker}")
        with httpx.Client(timeout=60) as client:
            for i in range(UPLOADS_EACH):
                doc.update(uid=uuid.uuid4().hex, suite=f"load{i % 3}")
                digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()
                answer = client.post(f"{base}/api/v1/runs", content=json.dumps(doc),
                                     headers=headers)
                assert answer.status_code == 201, answer.text
                sent.append((doc["uid"], digest, answer.json()["id"]))
        return sent

    with ThreadPoolExecutor(UPLOADERS) as pool:
        sent = [item for part in pool.map(uploader, range(UPLOADERS)) for item in part]
    total = UPLOADERS * UPLOADS_EACH
    assert len(sent) == total and len({run_id for _, _, run_id in sent}) == total
    with Store.open(url) as store:
        for uid, digest, run_id in sent:  # each stored run equals what was sent
            assert store.run_id_by_uid(uid) == run_id
            assert checksum(store.get_run(run_id)) == digest


def _peak_rss_kib(pid: int) -> int:
    """The peak resident memory of a process (VmHWM), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def test_one_gigabyte_body_is_refused_while_streaming(live) -> None:
    import socket

    base, url, token, pid = live
    with Store.open(url) as store:
        before = len(store.list_runs(limit=10_000))

    def body():
        chunk = b"a" * (1 << 20)
        for _ in range(1024):  # 1 GiB, never held in memory (no Content-Length)
            yield chunk

    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    try:
        answer = httpx.post(f"{base}/api/v1/runs", content=body(), headers=headers,
                            timeout=120)
        assert answer.status_code == 413
    except httpx.HTTPError:
        pass  # the server answered 413 and closed while the client was still sending
    # the server read at most its 64 MiB limit: its memory never held the body
    assert _peak_rss_kib(pid) < 600 * 1024
    # a declared 1 GB body is refused from the header alone
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(f"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                     f"{token}\r\nContent-Length: {1 << 30}\r\n\r\n{{".encode())
        reply = sock.recv(4096).decode("latin-1")
    assert reply.startswith("HTTP/1.1 413"), reply
    assert httpx.get(f"{base}/api/v1/health", timeout=10).status_code == 200
    with Store.open(url) as store:
        assert len(store.list_runs(limit=10_000)) == before


def test_push_command(live, tmp_path: Path, rtbench_env: dict[str, str]) -> None:
    base, url, token, _ = live
    local = f"sqlite:///{tmp_path / 'local.db'}"
    with Store.open(local) as store:
        run_id = store_synthetic(store, suite="pushed")
        uid = store.get_run(run_id).uid
    env = dict(rtbench_env, RTBENCH_TOKEN=token)
    # `rtbench push` in this process (tests/cli_inprocess.py): its start-up is not what
    # this test checks, the live server it talks to is a process of its own
    args = ["push", str(run_id), "--server", base, "--db", local]
    first = run_in_process(args, env, REPO, timeout=180)
    assert first.returncode == 0 and "(stored)" in first.stdout, first.stderr
    again = run_in_process([*args[:1], "latest", *args[2:]], env, REPO, timeout=180)
    assert again.returncode == 0 and f"run {run_id} -> " in again.stdout
    assert "(already there)" in again.stdout
    ref = run_in_process([*args[:1], "ref:loongson2f", *args[2:]], env, REPO, timeout=180)
    assert ref.returncode == 2 and "reference run" in ref.stderr
    with Store.open(url) as store:
        assert store.run_id_by_uid(uid) is not None
    env["RTBENCH_TOKEN"] = "rtb_wrong"
    wrong = run_in_process(args, env, REPO, timeout=180)
    assert wrong.returncode == 2 and "401" in wrong.stderr
    assert len(wrong.stderr.strip().splitlines()) == 1
    env.pop("RTBENCH_TOKEN")
    none = run_in_process(args, env, REPO, timeout=180)
    assert none.returncode == 2 and "RTBENCH_TOKEN" in none.stderr
    down = run_in_process([*args[:3], "http://127.0.0.1:1", *args[4:]],
                          dict(env, RTBENCH_TOKEN=token), REPO, timeout=180)
    assert down.returncode == 3 and "cannot reach" in down.stderr


def test_run_push_and_token_commands(live, tmp_path: Path, rtbench_env: dict[str, str]
                                     ) -> None:
    base, url, _, _ = live
    local = f"sqlite:///{tmp_path / 'local.db'}"

    def rtbench(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
        """`rtbench ARGS` in this process (tests/cli_inprocess.py; the runs simulate)."""
        return run_in_process(args, dict(rtbench_env, **env), REPO, timeout=180)

    created = rtbench("token", "create", "run-push", "--db", url)
    assert created.returncode == 0 and created.stdout.startswith("rtb_")
    token = created.stdout.strip()
    listed = rtbench("token", "list", "--db", url)
    assert "run-push" in listed.stdout and "active" in listed.stdout
    assert rtbench("token", "create", "run-push", "--db", url).returncode == 2
    # without a token nothing runs and nothing is stored
    refused = rtbench("run", "smoke", "--scale", "0.3", "--simulate", "7", "--no-report",
                      "--db", local, "--push", base)
    assert refused.returncode == 2 and "RTBENCH_TOKEN" in refused.stderr
    assert "Traceback" not in refused.stderr
    ran = rtbench("run", "smoke", "--scale", "0.3", "--simulate", "7", "--no-report",
                  "--db", local, "--push", base, RTBENCH_TOKEN=token)
    assert ran.returncode in (0, 1), ran.stderr
    assert f"pushed run 1 -> {base}/runs/" in ran.stdout
    with Store.open(local) as mine, Store.open(url) as server:
        uid = mine.get_run(1).uid
        server_id = server.run_id_by_uid(uid)
        assert server_id is not None
        assert checksum(server.get_run(server_id)) == checksum(mine.get_run(1))
    revoked = rtbench("token", "revoke", "run-push", "--db", url)
    assert revoked.returncode == 0
    assert "revoked" in rtbench("token", "list", "--db", url).stdout
    assert rtbench("push", "1", "--server", base, "--db", local,
                   RTBENCH_TOKEN=token).returncode == 2
    busy = rtbench("serve", "--db", local, "--bind", base.removeprefix("http://"))
    assert busy.returncode == 3 and "cannot listen" in busy.stderr
    assert "Traceback" not in busy.stderr


# Text of a figure that lies outside its SVG (cut off when drawn): [text, ...].
_OUTSIDE_SVG = """
const out = [];
for (const svg of document.querySelectorAll('figure svg')) {
  const box = svg.getBoundingClientRect();
  for (const t of svg.querySelectorAll('text')) {
    const r = t.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.left < box.left - 1 || r.right > box.right + 1 ||
        r.top < box.top - 1 || r.bottom > box.bottom + 1) out.push(t.textContent);
  }
}
return out;
"""
_REPR = re.compile(r"\{'|\['|\bNone\b|\bTrue\b|\bFalse\b")


def test_report_and_dashboard_pages_say_what_they_show(live, browser: Any,
                                                       tmp_path: Path) -> None:
    """Screenshots of the report and the dashboard (kept in RTBENCH_SCREENSHOTS when set,
    to look at): every figure's text inside its SVG, simulated figures titled SIMULATED,
    no Python repr on the page."""
    from selenium.webdriver.common.by import By

    from rtbench.report.html import write_html_report

    base, url, _, _ = live
    shots = Path(os.environ.get("RTBENCH_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    report = tmp_path / "report.html"
    write_html_report(bundle(suite="screenshots"), report)
    with Store.open(url) as store:
        run_id = max(r.id for r in store.list_runs(limit=100))
    driver = browser
    try:
        driver.set_window_size(1300, 3200)
        for name, page in (("report", report.as_uri()), ("dashboard-runs", f"{base}/runs"),
                           ("dashboard-run", f"{base}/runs/{run_id}")):
            driver.get(page)
            driver.save_screenshot(str(shots / f"{name}.png"))
            assert (shots / f"{name}.png").stat().st_size > 1000
            text = driver.find_element(By.TAG_NAME, "body").text
            assert not _REPR.findall(text), (name, _REPR.findall(text))
            svgs = driver.find_elements(By.CSS_SELECTOR, "figure svg")
            if name == "dashboard-runs":
                continue
            assert svgs, name
            assert driver.execute_script(_OUTSIDE_SVG) == [], name
            for svg in svgs:  # the runs are simulated: every figure's title says so
                assert "SIMULATED" in svg.get_attribute("textContent"), name
    finally:
        with contextlib.suppress(Exception):
            driver.get("about:blank")
