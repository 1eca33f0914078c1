"""An operator's session: `tr4947 notebook`, then a chapter run cell by cell in JupyterLab,
driven in Debian's headless Chromium, on the lab. Every request the browser makes stays on
127.0.0.1."""
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import nbformat
import pytest

from tr4947 import paths, targets
from tr4947.runbook import jupyter


playwright = pytest.importorskip("playwright.sync_api")
expect = playwright.expect

pytestmark = [pytest.mark.browser, pytest.mark.lab, pytest.mark.slow]
CHAPTER = "aff-a900-storage"          # the shortest chapter that brings up lab hosts
TOKEN = "browser-test-token"


def api(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}?token={TOKEN}",
                                timeout=10) as r:
        return json.loads(r.read())


def answer_dialogs(page) -> None:
    """A modal dialog JupyterLab opened on its own (on a busy machine: a kernel that took long
    to start, a server that answered late) is answered as an operator would, with its
    default button, and said in the test's output; it would otherwise take every click."""
    dialog = page.locator(".jp-Dialog")
    while dialog.count():
        print(f"JupyterLab asked: {dialog.first.inner_text()[:300]!r}; answered with its "
              "default button")
        dialog.first.locator(".jp-Dialog-button.jp-mod-accept").first.click()
        dialog.first.wait_for(state="detached", timeout=30_000)


def wait_for_idle_kernel(page, seconds: float) -> None:
    """The kernel's indicator turns idle. A kernel slow to start on a busy machine can make
    JupyterLab open a dialog first, and the kernel then waits on the answer: answer dialogs
    while waiting (CI once timed out here with the kernel never idle)."""
    idle = ".jp-Notebook-ExecutionIndicator[data-status='idle']"
    deadline = time.monotonic() + seconds
    while True:
        answer_dialogs(page)
        try:
            page.wait_for_selector(idle, timeout=5_000)
            return
        except Exception:
            if time.monotonic() > deadline:
                status = page.locator(".jp-Notebook-ExecutionIndicator").first
                raise AssertionError(
                    f"the kernel was not idle after {seconds:.0f} s (indicator: "
                    f"{status.get_attribute('data-status') if status.count() else 'absent'})")


@pytest.fixture
def server(tmp_path):
    lab = targets.open("lab", echo=False)
    if lab.lab.running():
        # The chapter runs on the default lab and takes it down afterwards: not while a
        # developer (or a runbook) is using it.
        pytest.skip("the default lab is running (this test runs a chapter on it and takes "
                    "it down); `tr4947 lab down` first")
    lab.reset()
    # Cells are laid out all at once (no virtual scrolling) so every output is in the page.
    settings = tmp_path / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    port = jupyter.free_port(18888)
    env = {**os.environ, "TR4947_NOTEBOOK_TOKEN": TOKEN,
           "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings")}
    proc = subprocess.Popen([sys.executable, "-m", "tr4947.cli", "notebook", CHAPTER,
                             "--port", str(port), "--fresh"], cwd=paths.REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    url = proc.stdout.readline().strip()
    assert url == f"JupyterLab: http://127.0.0.1:{port}/lab/tree/{CHAPTER}.ipynb?token={TOKEN}"
    deadline = time.monotonic() + 120
    while True:
        try:
            api(port, "/api/status")
            break
        except OSError:
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, "JupyterLab did not answer within 120 s"
            time.sleep(1)
    yield port, url.split(" ", 1)[1]
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    lab.reset()


def test_chapter_runs_cell_by_cell_in_jupyterlab(server, browser):
    port, url = server
    committed = (paths.REPO / "results" / "lab" / f"{CHAPTER}.json").read_bytes()
    n_code = len([c for c in nbformat.read(paths.REPO / "notebooks" / f"{CHAPTER}.ipynb",
                                           as_version=4).cells if c.cell_type == "code"])
    offsite = []
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()

    def only_loopback(route):
        host = urlparse(route.request.url).hostname
        if host not in ("127.0.0.1", "localhost"):
            offsite.append(route.request.url)
            return route.abort()
        return route.continue_()
    page.route("**/*", only_loopback)
    page.goto(url)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    wait_for_idle_kernel(page, 240)
    # Start from a notebook without outputs (the source has none; a working copy edited
    # earlier might), so whatever appears is new. A menu click can be lost on a busy machine (the menu closes before the item is
    # clicked): try again, then say what the page still showed.
    for _ in range(3):
        answer_dialogs(page)
        page.get_by_role("menuitem", name="Edit").click()
        item = page.get_by_text("Clear Outputs of All Cells")
        item.wait_for(state="visible", timeout=30_000)
        item.click()
        try:
            page.wait_for_function(
                "() => !document.querySelector('.jp-OutputArea-output')", timeout=30_000)
            break
        except Exception:
            page.keyboard.press("Escape")
    else:
        left = page.locator(".jp-OutputArea-output").count()
        raise AssertionError(f"'Clear Outputs of All Cells' left {left} outputs after 3 tries")
    # JupyterLab lays cells out after the first ones show (later still on a busy
    # machine): wait for every code cell of the chapter before counting them.
    page.wait_for_function(
        f"() => document.querySelectorAll('.jp-Notebook .jp-CodeCell').length >= {n_code}",
        timeout=120_000)
    # Run each code cell in turn, as an operator does, and wait for its execution count:
    # a key press lost on a busy machine (focus still in a menu) is pressed again, never
    # a cell that has started.
    code_cells = page.locator(".jp-Notebook .jp-CodeCell")
    for i in range(code_cells.count()):
        cell = code_cells.nth(i)
        prompt = cell.locator(".jp-InputPrompt").first
        for _ in range(3):
            answer_dialogs(page)
            prompt.click()                                  # selects the cell
            page.keyboard.press("Escape")                   # command mode
            page.keyboard.press("Control+Enter")            # run it, stay on it
            try:
                expect(prompt).to_have_text(re.compile(r"\[(\*|\d+)\]"), timeout=15_000)
                break
            except AssertionError:
                continue
        else:
            raise AssertionError(f"code cell {i} never started after 3 tries: "
                                 f"{cell.inner_text()[:200]!r}")
        expect(prompt).to_have_text(re.compile(r"\[\d+\]"), timeout=300_000)
    page.keyboard.press("Control+s")
    # Saved when the tab no longer shows the unsaved-changes mark.
    page.wait_for_function(
        "() => !document.querySelector('.jp-mod-current.jp-mod-dirty, "
        ".lm-TabBar-tab.jp-mod-current.jp-mod-dirty')", timeout=30_000)
    page.wait_for_timeout(500)
    shown = page.locator(".jp-Notebook").inner_text()
    context.close()

    assert offsite == [], f"the browser tried to leave the machine: {offsite}"
    # The lab's answers are on the page: the FlexGroup read back over REST, pNFS enabled.
    assert "kafka_fg_vol01" in shown and "flexgroup" in shown
    assert "pnfs_enabled" in shown and "results recorded for the guide" in shown
    nb = api(port, f"/api/contents/{CHAPTER}.ipynb")["content"]
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert len(code) == n_code
    assert all(c["execution_count"] for c in code), \
        [(i, c["source"][:60]) for i, c in enumerate(code) if not c["execution_count"]]
    outputs = [o for c in code for o in c["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]
    noise = [o["text"] for o in outputs if o.get("name") == "stderr"]
    assert not noise, f"warnings in the outputs: {noise}"
    # The last cell left the lab as the chapter found it (down), and a run by hand records
    # under build/, never over the committed results.
    assert not targets.open("lab", echo=False).lab.running()
    assert (paths.REPO / "results" / "lab" / f"{CHAPTER}.json").read_bytes() == committed
    by_hand = paths.BUILD / "results" / "lab" / CHAPTER / "records.jsonl"
    assert by_hand.exists() and '"finished"' in by_hand.read_text().splitlines()[-1]
