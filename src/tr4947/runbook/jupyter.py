"""JupyterLab for running a chapter step by step: ``tr4947 notebook [CHAPTER]``.

An operator opens a chapter notebook and runs it cell by cell on the lab or on their own
target (edit ``target`` and ``confirm`` in its parameters cell). Three choices keep that safe
and quiet:

* **Working copies.** JupyterLab serves ``build/jupyter/notebooks``, copies of notebooks/.
  The committed notebooks are the record of the last lab run (their outputs are what nbval
  compares), so a session by hand must not overwrite them. A copy the operator has not
  edited is refreshed from notebooks/ at every start; an edited one is kept (``--fresh``
  replaces it). Records of a run by hand go to build/results/<target>/, never results/.
* **Loopback only.** The server listens on 127.0.0.1 with a token; the project's kernel (the
  venv's ``python3``) is the default, and the kernel talks to the server over Unix sockets.
* **Offline.** No news feed, no update check, no extension manager reaching PyPI.

    tr4947 notebook                      JupyterLab on the chapter list
    tr4947 notebook cpu-utilization      ... opened on that chapter's notebook
"""
from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import socket
import sys
from pathlib import Path

from .. import paths

WORK = paths.BUILD / "jupyter"
NOTEBOOKS = paths.REPO / "notebooks"


def _sha(f: Path) -> str:
    return hashlib.sha256(f.read_bytes()).hexdigest()


def prepare(work: Path = WORK, fresh: bool = False, source: Path = NOTEBOOKS) -> list[str]:
    """Copy the chapter notebooks into ``work/notebooks``; returns what it says about the
    copies it kept (edited by hand since they were copied)."""
    dest = work / "notebooks"
    dest.mkdir(parents=True, exist_ok=True)
    manifest_file = work / "copies.json"
    try:
        manifest = json.loads(manifest_file.read_text())
    except (FileNotFoundError, ValueError):
        manifest = {}
    kept = []
    for nb in sorted(source.glob("*.ipynb")):
        copy = dest / nb.name
        edited = copy.exists() and manifest.get(nb.name) != _sha(copy)
        if edited and not fresh:
            kept.append(nb.stem)
            continue
        shutil.copyfile(nb, copy)
        manifest[nb.name] = _sha(copy)
    manifest_file.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    return kept


def free_port(start: int = 8888, tries: int = 50) -> int:
    for port in range(start, start + tries):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port on 127.0.0.1 between {start} and {start + tries - 1}: "
                       "give one with --port")


def server_config(root: Path, port: int, token: str) -> dict:
    return {
        "ServerApp": {"ip": "127.0.0.1", "port": port, "port_retries": 0,
                      "open_browser": False, "root_dir": str(root),
                      # The lab needs root (namespaces, mounts); its notebooks run as it does.
                      "allow_root": os.geteuid() == 0},
        "IdentityProvider": {"token": token},
        "MappingKernelManager": {"default_kernel_name": "python3"},
        "KernelManager": {"transport": "ipc"},
        "LabApp": {"news_url": None, "extension_manager": "readonly",
                   "check_for_updates_class":
                       "jupyterlab.handlers.announcements.NeverCheckForUpdate"},
    }


def url(port: int, token: str, chapter: str | None) -> str:
    where = f"lab/tree/{chapter}.ipynb" if chapter else "lab"
    return f"http://127.0.0.1:{port}/{where}?token={token}"


def command(work: Path, port: int, token: str) -> tuple[list[str], dict[str, str]]:
    """The jupyter lab command line and environment (settings and workspaces kept in
    ``work``, so a session leaves nothing in the user's home)."""
    (work / "config").mkdir(parents=True, exist_ok=True)
    cfg = work / "config" / "jupyter_server_config.json"
    cfg.touch(mode=0o600)                                   # it holds the token
    os.chmod(cfg, 0o600)
    cfg.write_text(json.dumps(server_config(work / "notebooks", port, token), indent=1))
    env = {"JUPYTERLAB_SETTINGS_DIR": str(work / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(work / "workspaces"),
           **os.environ,                                    # a user's own settings win
           "JUPYTER_CONFIG_DIR": str(work / "config"),
           "JUPYTER_RUNTIME_DIR": str(work / "runtime")}
    jupyter = Path(sys.executable).parent / "jupyter"
    return [str(jupyter), "lab"], env


def main(argv: list[str] | None = None) -> int:
    from ..usage import Parser
    from .chapters import RunbookError, notebook
    p = Parser(prog="tr4947 notebook",
               description="Start JupyterLab on 127.0.0.1 with the chapter notebooks, to run "
                           "one step by step (on the lab by default; set target and confirm "
                           "in its parameters cell for your own systems). Stop it with Ctrl-C.",
               epilog="Notebooks open as working copies in build/jupyter/notebooks: the "
                      "committed ones keep the outputs of the last recorded lab run.")
    p.add_argument("chapter", nargs="?", help="notebook to open, e.g. cpu-utilization "
                   "(default: the list)")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: the "
                   "first free one from 8888)")
    p.add_argument("--fresh", action="store_true", help="replace edited working copies with "
                   "the committed notebooks")
    a = p.parse_args(argv)
    if a.chapter:
        try:
            notebook(a.chapter)
        except RunbookError as exc:
            p.error(str(exc))
    kept = prepare(fresh=a.fresh)
    for name in kept:
        print(f"kept your edited copy of {name}.ipynb (--fresh starts from the committed one)",
              file=sys.stderr)
    try:
        port = a.port or free_port()
    except RuntimeError as exc:
        p.error(str(exc))
    token = os.environ.get("TR4947_NOTEBOOK_TOKEN") or secrets.token_urlsafe(24)
    argv_, env = command(WORK, port, token)
    print(f"JupyterLab: {url(port, token, a.chapter)}", flush=True)
    print("(the project's kernel; notebooks in build/jupyter/notebooks; Ctrl-C stops it)",
          file=sys.stderr, flush=True)
    os.execve(argv_[0], argv_, env)
    return 0                                                # not reached
