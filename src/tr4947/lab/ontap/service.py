"""The command line both ONTAP stand-in servers share (sshd: clustershell over SSH; rest:
the REST API over HTTPS): where to listen, which lab state to serve, logging, and the exit
codes `tr4947 lab up` reads when a server does not come up."""
from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path
from typing import Callable

log = logging.getLogger("tr4947.lab.ontap")


def run(prog: str, description: str, default_listen: str,
        serve: Callable[[str, int, Path], None], argv: list[str] | None = None) -> int:
    """Parse --listen/--state-root/--log-level and call serve(address, port, root).
    Exit 2 when the lab has no ONTAP state yet, 1 when the address cannot be bound."""
    ap = argparse.ArgumentParser(prog=prog, description=description)
    ap.add_argument("--listen", default=default_listen, help="ADDRESS:PORT")
    ap.add_argument("--state-root", type=Path, default=None,
                    help="lab state dir (default TR4947_LAB_STATE)")
    ap.add_argument("--log-level", default="INFO")
    a = ap.parse_args(argv)
    from ... import paths
    root = (a.state_root or paths.LAB_STATE).resolve()
    addr, _, port = a.listen.rpartition(":")
    logging.basicConfig(stream=sys.stderr, level=a.log_level,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if not (root / "ontap" / "state.json").exists():
        log.error("no ONTAP state in %s: run bootstrap (tr4947 lab up) first", root)
        return 2
    try:
        serve(addr, int(port), root)
    except OSError as exc:
        log.error("cannot listen on %s: %s", a.listen, exc)
        return 1
    return 0


def serve_forever(httpd) -> None:
    """Serve an http.server until SIGTERM or SIGINT, then close it: how every lab HTTP
    service (the REST API, the NFS service) ends when its host is taken down."""
    def on_signal(signum, frame):
        # shutdown() waits for serve_forever() to return: never from the serving thread.
        threading.Thread(target=httpd.shutdown, daemon=True).start()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    httpd.serve_forever(poll_interval=0.5)
    httpd.server_close()
