"""Test doubles for the Target API that need no network.

* :class:`NoTransport`: a Target whose three ways of reaching a host (``_shell``, ``_ontap``,
  ``_put``) fail the test: for steps that must only be planned.
* :class:`LocalPool`: stands in for the SSH connection pool and runs each command in bash on
  this machine (with the stdin the Target would send), recording what it was given. The
  Target's own command building (cd, exports, secrets read from stdin) is what runs, so a
  script such as the fstab editor is tested as it would run on a host.
"""
from __future__ import annotations

import os
import subprocess
import textwrap
import time
from pathlib import Path

from tr4947 import inventory
from tr4947.targets.base import Target
from tr4947.transports import ssh


class TransportUsed(AssertionError):
    pass


class NoTransport(Target):
    """A Target that must not reach any host."""

    def _shell(self, h, *a, **kw):
        raise TransportUsed(f"a planned step reached {h.name} (shell)")

    def _ontap(self, h, *a, **kw):
        raise TransportUsed(f"a planned step reached {h.name} (clustershell)")

    def _put(self, h, *a, **kw):
        raise TransportUsed(f"a planned step reached {h.name} (file placement)")


class LocalPool:
    """``Pool.run`` in local bash; ``calls`` keeps (endpoint, command, stdin)."""

    def __init__(self, env: dict[str, str] | None = None):
        self.calls: list[tuple[ssh.Endpoint, str, str | None]] = []
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/root",
                    **(env or {})}

    def run(self, ep, command, input=None, timeout=600):
        self.calls.append((ep, command, input))
        t0 = time.monotonic()
        cp = subprocess.run(["bash", "-c", command], input=input, capture_output=True,
                            text=True, timeout=timeout, env=self.env)
        return ssh.Completed(cp.returncode, cp.stdout, cp.stderr, time.monotonic() - t0)

    def forget(self, ep):
        pass

    def close(self):
        pass


def local_target(inv, confirm: bool = True, cls=Target, **kw) -> Target:
    t = cls(inv, confirm=confirm, echo=False)
    t._pool = LocalPool(**kw)
    return t


#: A small real-kind inventory: documentation addresses (RFC 5737), nothing that answers.
REAL_INVENTORY = """\
all:
  vars: {{target_kind: {kind}}}
  children:
    ontap:
      hosts:
        cluster1:
          ansible_host: {ontap}
          ansible_user: admin
          ontap_svm: svm_target
          ontap_data_lifs: [{{name: a, address: {lif1}}}, {{name: b, address: {lif2}}}]
    brokers:
      hosts:
        b1: {{ansible_host: {b1}, kafka_node_id: 1}}
        b2: {{ansible_host: {b2}, kafka_node_id: 2}}
    clients:
      hosts:
        client-1: {{ansible_host: {client}}}
"""


def write_inventory(dir: Path, kind: str = "real", **addresses) -> inventory.Inventory:
    """``REAL_INVENTORY`` under ``dir/<kind>/hosts.yml`` (addresses overridable), loaded."""
    a = {"ontap": "192.0.2.10", "lif1": "192.0.2.11", "lif2": "192.0.2.12",
         "b1": "192.0.2.1", "b2": "192.0.2.2", "client": "192.0.2.5", **addresses}
    f = Path(dir) / kind / "hosts.yml"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(textwrap.dedent(REAL_INVENTORY.format(kind=kind, **a)))
    return inventory.load(f)
