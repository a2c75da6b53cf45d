"""Drive a notebook in JupyterLab through a real Chromium; list what a learner would see go wrong.

``Checker.check`` opens one notebook, runs every cell, and returns a ``Report`` whose
``problems`` are plain sentences: kernel errors and tracebacks, widgets that never render,
demos that do not react to their slider, predict-first widgets that give no feedback. The tests
assert that the report of a real notebook is empty, and that the report of a deliberately broken
notebook names each fault (so the check is known to be able to fail).

The widget DOM contract (agreed with clipkit/widgets): a demo's root has CSS class
``clipkit-demo``, its figure ``clipkit-figure`` (an Image, or an Output holding an image), its
numbers ``clipkit-readout``; a predict-first widget's root ``clipkit-predict``, its Check button
``clipkit-commit`` and its feedback ``clipkit-feedback``.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CHROMIUM = "/usr/bin/chromium"
INSTALL_HINT = "apt-get install chromium (see README, Browser check)"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
# Sentences that only a broken stderr stream contains (warnings alone do not fail the check).
STDERR_FAILURE = re.compile(r"Traceback|Error\b|Exception\b")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def find_chromium() -> tuple[str | None, str]:
    """The Chromium binary to use and, when there is none, why (the skip reason)."""
    chosen = os.environ.get("CLIPKIT_CHROMIUM")
    if chosen:
        if Path(chosen).is_file():
            return chosen, ""
        return None, f"CLIPKIT_CHROMIUM={chosen} is not a file: {INSTALL_HINT}"
    if Path(DEFAULT_CHROMIUM).is_file():
        return DEFAULT_CHROMIUM, ""
    on_path = shutil.which("chromium")
    if on_path:
        return on_path, ""
    return None, f"Chromium not installed: {INSTALL_HINT}"


# --- the served copy -------------------------------------------------------------------------

# JupyterLab user settings for the run: no news or update checks (the network may be closed), no
# autosave (the copy is thrown away anyway), and every cell attached to the DOM so that widgets
# below the fold render and can be clicked.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/extensionmanager-extension/plugin": {"enabled": False},
}


def make_served_copy(root: Path) -> Path:
    """Copy notebooks/ and data/ (what notebooks read relative to themselves) under ``root``.

    JupyterLab writes to the files it serves (autosave, checkpoints), so it serves this copy and
    never the repository's notebooks, which must stay free of outputs.
    """
    for name in ("notebooks", "data"):
        if (REPO / name).is_dir():
            shutil.copytree(
                REPO / name, root / name, ignore=shutil.ignore_patterns(".ipynb_checkpoints")
            )
    (root / "notebooks").mkdir(exist_ok=True)
    write_selfcheck_notebooks(root / "selfcheck")
    return root


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Lab:
    """A running JupyterLab server, serving ``root`` on loopback."""

    process: subprocess.Popen
    url: str
    token: str
    root: Path
    log: Path
    stopping: list[threading.Thread] = field(default_factory=list)

    def delete_session(self, session_id: str | None) -> None:
        """Stop a notebook's kernel in the background, while the next notebook opens."""
        if not session_id:
            return
        request = urllib.request.Request(
            f"{self.url}api/sessions/{session_id}",
            method="DELETE",
            headers={"Authorization": f"token {self.token}"},
        )

        def delete() -> None:
            try:
                urllib.request.urlopen(request, timeout=60).close()
            except OSError:
                pass  # stop_lab stops whatever kernel is left

        thread = threading.Thread(target=delete, daemon=True)
        thread.start()
        self.stopping.append(thread)

    def log_tail(self, n: int = 40) -> str:
        try:
            lines = self.log.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-n:])


def start_lab(tmp: Path, timeout: float = 120.0) -> Lab:
    """Start JupyterLab with this interpreter, on a free loopback port, touching only ``tmp``."""
    root = make_served_copy(tmp / "serve")
    home = {name: tmp / name for name in ("config", "data", "runtime", "ipython")}
    settings_dir, workspaces_dir = tmp / "lab-settings", tmp / "lab-workspaces"
    for d in [*home.values(), settings_dir, workspaces_dir]:
        d.mkdir(parents=True, exist_ok=True)
    for plugin, values in LAB_SETTINGS.items():
        target = settings_dir / f"{plugin}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values), encoding="utf-8")

    env = dict(os.environ)
    env.pop("JUPYTER_PATH", None)
    env.update(
        JUPYTER_CONFIG_DIR=str(home["config"]),
        JUPYTER_DATA_DIR=str(home["data"]),
        JUPYTER_RUNTIME_DIR=str(home["runtime"]),
        IPYTHONDIR=str(home["ipython"]),
        # Anything a notebook might keep per user (a progress store) lands here too.
        XDG_DATA_HOME=str(home["data"]),
        XDG_STATE_HOME=str(home["data"]),
        JUPYTERLAB_SETTINGS_DIR=str(settings_dir),
        JUPYTERLAB_WORKSPACES_DIR=str(workspaces_dir),
        JUPYTER_PREFER_ENV_PATH="1",
        PYDEVD_DISABLE_FILE_VALIDATION="1",
    )
    env.setdefault("CLIPKIT_QUICK", "1")  # shrinks long experiments; never skips a cell
    token = secrets.token_hex(16)
    port = _free_port()
    log = tmp / "jupyterlab.log"
    cmd = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--allow-root",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.news_url=",
        # The venv's own python3 kernel (sys.prefix), and no other.
        "--KernelSpecManager.ensure_native_kernel=True",
    ]
    with open(log, "wb") as out:
        process = subprocess.Popen(
            cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    lab = Lab(process, f"http://127.0.0.1:{port}/", token, root, log)
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {process.returncode}:\n{lab.log_tail()}")
        try:
            with urllib.request.urlopen(f"{lab.url}api/status?token={token}", timeout=2):
                return lab
        except OSError:
            if time.monotonic() > deadline:
                stop_lab(lab)
                raise RuntimeError(f"JupyterLab did not answer:\n{lab.log_tail()}") from None
            time.sleep(0.2)


def stop_lab(lab: Lab) -> None:
    """Stop the server (it shuts its kernels down) and wait for it."""
    for thread in lab.stopping:
        thread.join(timeout=30)
    if lab.process.poll() is None:
        lab.process.terminate()  # SIGTERM: jupyter_server stops its kernels, then exits
        try:
            lab.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            lab.process.kill()
            lab.process.wait(timeout=10)


# --- checking one notebook ---------------------------------------------------------------------


@dataclass
class Report:
    """What one notebook did in the browser. ``problems`` empty means it passed."""

    path: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stdout: str = ""
    demos: int = 0
    predicts: int = 0


@dataclass
class Timeouts:
    """Seconds to wait for the UI; none of them is a limit on how fast anything must be."""

    open: float = 90.0
    run: float = 300.0
    widgets: float = 30.0
    react: float = 20.0


_FIND_PANEL = """
const findPanel = (path) => {
  const app = window.jupyterapp;
  if (!app || !app.shell) return null;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.path === path && w.sessionContext) return w;
  }
  return null;
};
"""

_APP_READY = """() => {
  const app = window.jupyterapp;
  return !!app && !!app.shell && app.docRegistry.getWidgetFactory('Notebook') !== undefined
    && app.commands.hasCommand('docmanager:open');
}"""

_OPEN = """async (path) => {
  const app = window.jupyterapp;
  await app.restored;
  const widget = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  return widget.id;
}"""

_READY = (
    "(path) => {"
    + _FIND_PANEL
    + """
  const p = findPanel(path);
  if (!p || !p.context.isReady || !p.sessionContext.isReady) return false;
  const k = p.sessionContext.session && p.sessionContext.session.kernel;
  return !!k && k.connectionStatus === 'connected' && k.status === 'idle';
}"""
)

# Listen to every message the kernel publishes: errors and stderr from cells, and also from widget
# callbacks, which JupyterLab shows in no cell (only in its log console).
_HOOK_AND_RUN = (
    "async (path) => {"
    + _FIND_PANEL
    + """
  const p = findPanel(path);
  window.__clipkit = window.__clipkit || {};
  const log = (window.__clipkit[path] = {errors: [], stderr: [], stdout: []});
  const hook = (kernel) => {
    if (!kernel) return;
    kernel.iopubMessage.connect((_, msg) => {
      const t = msg.header.msg_type, c = msg.content;
      if (t === 'error') {
        log.errors.push(c.ename + ': ' + c.evalue + '\\n' + (c.traceback || []).join('\\n'));
      } else if (t === 'stream') {
        (c.name === 'stderr' ? log.stderr : log.stdout).push(c.text);
      }
    });
  };
  hook(p.sessionContext.session.kernel);
  p.sessionContext.kernelChanged.connect((_, args) => hook(args.newValue));
  window.jupyterapp.shell.activateById(p.id);
  await window.jupyterapp.commands.execute('notebook:run-all-cells', {widgetId: p.id});
  return true;
}"""
)

_RUN_STATE = (
    "(path) => {"
    + _FIND_PANEL
    + """
  const p = findPanel(path);
  if (window.__clipkit[path].errors.length) return 'error';
  const k = p.sessionContext.session && p.sessionContext.session.kernel;
  if (k && ['dead', 'autorestarting', 'restarting'].includes(k.status)) return 'died';
  if (!k || k.status !== 'idle') return false;
  const code = p.content.widgets.filter(
    (c) => c.model.type === 'code' && c.model.sharedModel.getSource().trim() !== '');
  const done = code.every((c) => {
    const prompt = c.node.querySelector('.jp-InputPrompt');
    return c.model.executionCount !== null && !(prompt && prompt.textContent.includes('*'));
  });
  return done ? 'done' : false;
}"""
)

# Widget views are found through the outputs' data (their DOM carries no MIME type), so a view
# that renders nothing at all is still counted.
_WIDGET_STATE = (
    "(path) => {"
    + _FIND_PANEL
    + f"""
  const p = findPanel(path);
  const views = [];
  for (const cell of p.content.widgets) {{
    if (cell.model.type !== 'code' || !cell.outputArea) continue;
    const outputs = cell.model.outputs;
    for (let i = 0; i < outputs.length; i++) {{
      const spec = outputs.get(i).data['{WIDGET_MIME}'];
      const child = cell.outputArea.widgets[i];
      if (!spec || !spec.model_id || !child) continue;
      views.push(child.node.querySelector('.jp-OutputArea-output') || child.node);
    }}
  }}
  const text = (n) => (n.textContent || '').trim();
  const loading = (v) => text(v).startsWith('Loading widget');
  return {{
    views: views.length,
    loading: views.filter(loading).length,
    errors: [...p.content.node.querySelectorAll('.jp-OutputArea-output')]
      .map(text).filter((t) => t.includes('Error displaying widget')),
    empty: views.filter((v) => !loading(v) && !v.querySelector('.jupyter-widgets')
                               && !v.classList.contains('jupyter-widgets')).length,
    stderrShown: [...p.content.node.querySelectorAll(
      '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')].map(text),
  }};
}}"""
)

_IDLE = (
    "(path) => {"
    + _FIND_PANEL
    + """
  const k = findPanel(path).sessionContext.session.kernel;
  return k.status === 'idle';
}"""
)

_LOG = "(path) => window.__clipkit[path]"

_SHUTDOWN = (
    "async (path) => {"
    + _FIND_PANEL
    + """
  const p = findPanel(path);
  if (!p) return null;
  const session = p.sessionContext.session;
  const id = session ? session.id : null;
  p.dispose();  // closes the tab; the caller deletes the session, and with it the kernel
  return id;
}"""
)

# What a demo shows: the readout's text and the figure's image(s); a change in either counts.
_SNAPSHOT = """(demo) => {
  const readout = [...demo.querySelectorAll('.clipkit-readout')].map((n) => n.innerText.trim());
  const figure = [...demo.querySelectorAll('.clipkit-figure')].map((f) => {
    const imgs = f.tagName === 'IMG' ? [f] : [...f.querySelectorAll('img')];
    return imgs.length ? imgs.map((i) => i.src).join(' ') : f.innerHTML;
  });
  return JSON.stringify({readout, figure});
}"""

_FEEDBACK = """(fb) => {
  const style = getComputedStyle(fb);
  const shown = fb.getClientRects().length > 0 && style.visibility !== 'hidden';
  return shown ? fb.innerText.trim() : '';
}"""


def _clean(text: str) -> str:
    return ANSI.sub("", text).strip()


def _shorten(text: str, keep: int = 1200) -> str:
    """The first line (the exception) and the end of a traceback."""
    if len(text) <= keep:
        return text
    head = text.splitlines()[0]
    return f"{head}\n[...]\n{text[-keep:]}"


def _kernel_problems(log: dict, seen: tuple[int, int], stage: str) -> list[str]:
    """Errors and failing stderr the kernel published after ``seen`` (errors, stderr chunks)."""
    errors = dict.fromkeys(_shorten(_clean(e)) for e in log["errors"][seen[0] :])  # once each
    problems = [f"{stage}: kernel error: {e}" for e in errors]
    stderr = _clean("".join(log["stderr"][seen[1] :]))
    if STDERR_FAILURE.search(stderr):
        problems.append(f"{stage}: error on stderr: {_shorten(stderr)}")
    return problems


def open_lab(page, lab: Lab, timeout: float = 90.0) -> None:
    """Load JupyterLab in ``page`` (an empty workspace) and wait until it has started."""
    page.goto(f"{lab.url}lab/workspaces/clipkit-check?reset&token={lab.token}")
    page.wait_for_function(_APP_READY, timeout=timeout * 1000, polling=100)


class Checker:
    """Checks notebooks one after another in one JupyterLab tab, each in a fresh kernel.

    ``order`` is the sequence the tests will ask for. While one notebook's widgets are exercised
    the next one is already running, in its own kernel, in a background tab: running the cells
    is most of the time, and two kernels use two cores.
    """

    def __init__(self, page, lab: Lab, order: list[str] | tuple[str, ...] = ()):
        self.page, self.lab, self.order = page, lab, list(order)
        self.started: dict[str, dict] = {}
        self.page_errors: list[str] = []
        page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))
        page.on("console", self._on_console)
        if not page.url.startswith(lab.url):
            open_lab(page, lab)

    def _on_console(self, message) -> None:
        # A widget view that fails inside a box logs here and shows nothing else. Resources that
        # cannot load (the badges' images, with the network closed) are not the notebook's fault.
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.page_errors.append(f"console: {message.text[:500]}")

    def start(self, path: str, t: Timeouts) -> None:
        """Open ``path``, wait for its kernel, and run all cells without waiting for them."""
        if path in self.started:
            return
        began = time.monotonic()
        info = self.started[path] = {"panel": None, "problem": None, "notes": []}
        try:
            info["panel"] = self.page.evaluate(_OPEN, path)
            self.page.wait_for_function(_READY, arg=path, timeout=t.open * 1000, polling=100)
            info["notes"].append(f"opened in {time.monotonic() - began:.1f} s")
            self.page.evaluate(_HOOK_AND_RUN, path)
            info["running_since"] = time.monotonic()
        except Exception as exc:
            info["problem"] = f"the notebook or its kernel did not start ({exc})"

    def check(self, path: str, timeouts: Timeouts | None = None) -> Report:
        """Run ``path`` (relative to the served root) and exercise its widgets; then close it."""
        t = timeouts or Timeouts()
        self.start(path, t)
        if path in self.order and self.order.index(path) + 1 < len(self.order):
            self.start(self.order[self.order.index(path) + 1], Timeouts())
        info = self.started[path]
        report = Report(path, notes=list(info["notes"]))
        errors_before = len(self.page_errors)
        try:
            if info["problem"]:
                report.problems.append(f"{info['problem']}:\n{self.lab.log_tail()}")
                return report
            self.page.evaluate("(id) => window.jupyterapp.shell.activateById(id)", info["panel"])
            panel = self.page.locator(f"#{info['panel']}")
            _run_and_inspect(self.page, panel, path, t, report, info["running_since"])
        finally:
            try:
                self.lab.delete_session(self.page.evaluate(_SHUTDOWN, path))
            except Exception as exc:  # the page may be gone; the server stops the kernel anyway
                report.notes.append(f"closing the notebook failed: {exc}")
        report.problems += [
            f"JavaScript error in the page: {e}" for e in self.page_errors[errors_before:]
        ]
        return report


def check_notebook(page, lab: Lab, path: str, timeouts: Timeouts | None = None) -> Report:
    """Check one notebook on its own (see :class:`Checker`)."""
    return Checker(page, lab).check(path, timeouts)


def _run_and_inspect(page, panel, path: str, t: Timeouts, report: Report, start: float) -> None:
    try:
        handle = page.wait_for_function(_RUN_STATE, arg=path, timeout=t.run * 1000, polling=250)
        state = handle.json_value()
    except Exception:
        state = "timeout"
    log = page.evaluate(_LOG, path)
    report.stdout = "".join(log["stdout"])
    if state == "timeout":
        report.problems.append(f"run all: not every cell ran within {t.run:.0f} s of waiting")
    if state == "died":
        report.problems.append("run all: the kernel died")
    report.problems += _kernel_problems(log, (0, 0), "run all")
    stderr = _clean("".join(log["stderr"]))
    if stderr and not STDERR_FAILURE.search(stderr):
        report.notes.append(f"stderr, not counted as an error: {_shorten(stderr, 600)}")
    if state in ("timeout", "died"):
        return
    if state == "error":
        # JupyterLab stops at the first error; still check the widgets that did appear.
        try:
            page.wait_for_function(_IDLE, arg=path, timeout=t.run * 1000, polling=250)
        except Exception:
            report.problems.append("the kernel stayed busy after an error")
            return

    try:
        page.wait_for_function(
            f"(path) => ({_WIDGET_STATE})(path).loading === 0",
            arg=path,
            timeout=t.widgets * 1000,
            polling=250,
        )
    except Exception:
        pass  # reported below, from the state itself
    widgets = page.evaluate(_WIDGET_STATE, path)
    if widgets["loading"]:
        report.problems.append(f"{widgets['loading']} widget(s) stuck at 'Loading widget...'")
    report.problems += [f"widget failed: {e[:300]}" for e in widgets["errors"]]
    if widgets["empty"]:
        report.problems.append(f"{widgets['empty']} widget view(s) rendered nothing")
    shown = [s for s in widgets["stderrShown"] if STDERR_FAILURE.search(s)]
    if shown and not any("kernel error" in p or "stderr" in p for p in report.problems):
        report.problems += [f"error shown in an output: {_shorten(s)}" for s in shown]
    took = time.monotonic() - start
    report.notes.append(f"ran all and rendered {widgets['views']} widget view(s) in {took:.1f} s")
    start = time.monotonic()

    # Predict first, then the demos: a demo may only appear once the learner has committed.
    log = page.evaluate(_LOG, path)
    seen = (len(log["errors"]), len(log["stderr"]))
    _check_predict(page, panel, t, report)
    _check_demos(page, panel, t, report)
    log = page.evaluate(_LOG, path)
    report.problems += _kernel_problems(log, seen, "widgets")
    report.notes.append(f"exercised the widgets in {time.monotonic() - start:.1f} s")


def _check_predict(page, panel, t: Timeouts, report: Report) -> None:
    predicts = panel.locator(".clipkit-predict")
    report.predicts = predicts.count()
    if not report.predicts:
        report.notes.append("no predict-first widget (.clipkit-predict)")
        return
    predict = predicts.first
    predict.scroll_into_view_if_needed()
    feedback = predict.locator(".clipkit-feedback")
    commit = predict.locator(".clipkit-commit")
    if not feedback.count() or not commit.count():
        report.problems.append("predict widget lacks .clipkit-commit or .clipkit-feedback")
        return
    before = feedback.first.evaluate(_FEEDBACK)
    if before:
        report.problems.append(f"predict feedback visible before Check: {before[:200]!r}")
    if not _choose_an_option(predict):
        report.problems.append("predict widget: found no option to choose")
        return
    commit.first.click()
    try:
        feedback.first.wait_for(state="visible", timeout=t.react * 1000)
        page.wait_for_function(
            f"(fb) => ({_FEEDBACK})(fb) !== ''",
            arg=feedback.first.element_handle(),
            timeout=t.react * 1000,
            polling=100,
        )
    except Exception:
        report.problems.append("predict widget: no feedback after choosing and clicking Check")


def _choose_an_option(predict) -> bool:
    """Pick an answer the way a learner would: a radio, a toggle button, or a dropdown."""
    radios = predict.locator("input[type=radio]")
    if radios.count():
        radios.first.check()
        return True
    toggles = predict.locator(".widget-toggle-button")
    if toggles.count():
        toggles.first.click()
        return True
    selects = predict.locator("select")
    if selects.count():
        options = selects.first.locator("option").count()
        selects.first.select_option(index=min(1, options - 1))
        return True
    checkboxes = predict.locator("input[type=checkbox]")
    if checkboxes.count():
        checkboxes.first.check()
        return True
    return False


def _check_demos(page, panel, t: Timeouts, report: Report) -> None:
    demos = panel.locator(".clipkit-demo")
    report.demos = demos.count()
    if not report.demos:
        report.notes.append("no demo (.clipkit-demo)")
    for i in range(report.demos):
        demo = demos.nth(i)
        where = f"demo {i + 1} of {report.demos}"
        if not demo.is_visible():
            report.problems.append(f"{where}: not visible after running all cells")
            continue
        demo.scroll_into_view_if_needed()
        if not demo.locator(".clipkit-readout, .clipkit-figure").count():
            report.problems.append(f"{where}: has neither .clipkit-readout nor .clipkit-figure")
            continue
        handles = demo.locator(".noUi-handle")
        if not handles.count():
            report.problems.append(f"{where}: has no slider to move")
            continue
        before = demo.evaluate(_SNAPSHOT)
        handle = handles.first
        if not _nudge(handle):
            report.problems.append(f"{where}: its first slider does not move from the keyboard")
            continue
        try:
            page.wait_for_function(
                f"([demo, before]) => ({_SNAPSHOT})(demo) !== before",
                arg=[demo.element_handle(), before],
                timeout=t.react * 1000,
                polling=100,
            )
        except Exception:
            report.problems.append(
                f"{where}: moving its first slider changed neither readout nor figure "
                f"(waited {t.react:.0f} s); it shows {before[:300]}"
            )


_SLIDER_POSITION = """(handle) => {
  const slider = handle.closest('.widget-slider') || handle.parentElement;
  const readout = slider.querySelector('.widget-readout');
  const origin = handle.closest('.noUi-origin');
  return [handle.getAttribute('aria-valuetext'), readout ? readout.textContent : '',
          origin ? origin.style.transform + origin.style.left : ''].join('|');
}"""


def _nudge(handle) -> bool:
    """Move a noUiSlider handle ten steps with the keyboard (PageUp twice), or else down."""
    start = handle.evaluate(_SLIDER_POSITION)
    for key in ("PageUp", "PageDown"):
        handle.focus()
        for _ in range(2):
            handle.press(key)
        if handle.evaluate(_SLIDER_POSITION) != start:
            return True
    return False


# --- self-check notebooks ----------------------------------------------------------------------

_PNG = '''\
import struct
import zlib

import ipywidgets as w


def png(shade):
    """An 8 x 8 grey PNG, so the figure's bytes follow the slider."""
    rows = b"".join(b"\\x00" + bytes([shade]) * 8 for _ in range(8))

    def chunk(kind, data):
        crc = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + crc

    header = chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 0, 0, 0, 0))
    body = chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    return b"\\x89PNG\\r\\n\\x1a\\n" + header + body
'''

_DEMO = """\
slider = w.FloatSlider(value=0.5, min=0, max=1, step=0.05, description="w")
readout = w.HTML().add_class("clipkit-readout")
figure = w.Image(format="png").add_class("clipkit-figure")


def update(change=None):
    {body}


slider.observe(update, "value")
update()
w.VBox([slider, readout, figure]).add_class("clipkit-demo")
"""

_PREDICT = """\
choice = w.RadioButtons(options=["it grows", "it shrinks"], value=None)
feedback = w.HTML().add_class("clipkit-feedback")
check = w.Button(description="Check").add_class("clipkit-commit")
check.on_click(lambda b: {action})
w.VBox([choice, check, feedback]).add_class("clipkit-predict")
"""

KERNEL_LINE = "CLIPKIT-KERNEL"


def write_selfcheck_notebooks(folder: Path) -> None:
    """A good sample notebook (one demo, one predict) and a broken twin with every fault."""
    folder.mkdir(parents=True, exist_ok=True)
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    good_update = (
        'readout.value = f"<b>w = {slider.value:.2f}</b>"\n'
        "    figure.value = png(int(255 * slider.value))"
    )
    good = [
        f"import sys\n\nimport clipkit\n\nprint({KERNEL_LINE!r}, sys.prefix, clipkit.__file__)",
        _PNG,
        _DEMO.format(body=good_update),
        _PREDICT.format(action='setattr(feedback, "value", f"You said: {choice.value}.")'),
    ]
    broken = [
        _PNG,
        # The callback raises once the slider moves: a traceback no cell shows, and no change.
        _DEMO.format(
            body="if change is not None:\n"
            '        raise ValueError("clipkit self-check: broken callback")\n'
            '    readout.value = "w = 0.50"\n'
            "    figure.value = png(128)"
        ),
        # Check does nothing: no feedback.
        _PREDICT.format(action="None"),
        # A view of a widget that does not exist.
        "from IPython.display import display\n\n"
        f'display({{"{WIDGET_MIME}": {{"model_id": "0123456789abcdef", '
        '"version_major": 2, "version_minor": 0}}, raw=True)',
        'raise RuntimeError("clipkit self-check: a cell that raises")',
        'print("never reached")',
    ]
    for name, sources in (("good", good), ("broken", broken)):
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = kernelspec
        nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
        nbformat.write(nb, folder / f"{name}.ipynb")
