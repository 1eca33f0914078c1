"""A papermill engine that reports progress per step.

papermill separates *how* a notebook is executed (engines) from I/O and parameters; this
engine is nbclient's, plus one progress line per cell that names the procedure step (taken
from the nearest markdown heading such as ``## FV-3: Create the topic``) and the elapsed time.
Long steps (a lab bring-up, a benchmark) therefore show where the run is.
"""
from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from secrets import token_hex

from jupyter_client.manager import AsyncKernelManager
from jupyter_core.paths import jupyter_runtime_dir
from papermill.engines import NBClientEngine, papermill_engines
from traitlets import CaselessStrEnum

ENGINE_NAME = "tr4947-progress"
HEADING = re.compile(r"^#+\s*(.+)$", re.M)


class LocalKernelManager(AsyncKernelManager):
    """The kernel and the runner talk over Unix sockets in Jupyter's runtime directory, not
    TCP ports: nothing else on the machine can connect, and ipykernel has no unencrypted-TCP
    warning to print into the run's output."""
    transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

    def _ip_default(self) -> str:
        # jupyter_client's default is "kernel-ipc" relative to the kernel's working directory
        # (notebooks/): a killed kernel would leave its sockets in the repository, where the
        # site build trips over them. An absolute path in the runtime directory instead.
        if self.transport != "ipc":
            return super()._ip_default()
        runtime = Path(jupyter_runtime_dir())
        runtime.mkdir(parents=True, exist_ok=True)
        return str(runtime / f"tr4947-{os.getpid()}-{token_hex(4)}-ipc")


class ProgressEngine(NBClientEngine):
    out = sys.stderr

    @classmethod
    def execute_managed_notebook(cls, nb_man, kernel_name, **kwargs):
        name = kwargs.get("input_path", "notebook")
        name = str(name).rsplit("/", 1)[-1].removesuffix(".ipynb")
        code_cells = [c for c in nb_man.nb.cells if c.cell_type == "code"]
        step = {"title": "setup", "t0": time.monotonic(), "n": 0}
        start = time.monotonic()
        original_start, original_complete = nb_man.cell_start, nb_man.cell_complete

        # papermill calls cell_start for markdown cells too: their headings name the step.
        def cell_start(cell, cell_index=None, **kw):
            if cell.cell_type == "markdown":
                m = HEADING.search(cell.source)
                if m:
                    step["title"] = m.group(1).strip()
            elif cell.cell_type == "code":
                step["n"] += 1
                step["t0"] = time.monotonic()
            return original_start(cell, cell_index, **kw)

        def cell_complete(cell, cell_index=None, **kw):
            result = original_complete(cell, cell_index, **kw)
            if cell.cell_type == "code":
                print(f"  [{name}] {step['n']:>2}/{len(code_cells)} {step['title'][:60]:<60} "
                      f"{time.monotonic() - step['t0']:6.1f}s  (total {time.monotonic() - start:5.0f}s)",
                      file=cls.out, flush=True)
            return result

        nb_man.cell_start, nb_man.cell_complete = cell_start, cell_complete
        kwargs.setdefault("kernel_manager_class", LocalKernelManager)
        return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)


def register() -> str:
    papermill_engines.register(ENGINE_NAME, ProgressEngine)
    return ENGINE_NAME
