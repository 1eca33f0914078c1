"""LabTarget: the TR's commands, run as written, on the embedded lab.

A lab host is a loopback address plus a root directory, LAB_STATE/hosts/<host>/, that stands
for its file system. Commands run locally in bash with:

* cwd and HOME at the host root, so ``bin/kafka-topics.sh`` works (bin/ holds wrappers that
  call the same Java classes as Kafka's scripts; Confluent's names without .sh too);
* PATH prefixed with LAB_STATE/bin: Kafka's tools and the lab's mount/umount/df shims, so
  ``mount -t nfs 127.0.10.11:/kafka_fg_vol01 /demo`` mounts the lab volume;
* KAFKA_HOME at the host root, LAB_HOST / LAB_HOST_ADDRESS for scripts that need them;
* absolute paths in the host's own top-level directories (``/demo``, ``/tmp``, ``/mnt``,
  ``/var``...) mapped to the host root in the command, and back in the output, so
  ``ls -la /demo/broker_demo_1`` lists the broker's log dir and prints the TR's paths.
  System paths (/usr, /bin, /etc, /proc...) are left alone, except the host's own
  ``/etc/fstab`` (and copies of it such as ``/etc/fstab.tr4947.bak``): every lab host has
  one, empty until a step adds lines, and the lab's ``mount -a`` reads it.

ONTAP commands go over real SSH to the stand-in with the password from its state dir.
"""
from __future__ import annotations

import os
import sys
import re
from pathlib import Path

from .. import paths
from ..inventory import Host, Inventory
from .base import Result, Target, now_iso, run_local
from .ssh import ontap_run

# Top-level directories of a lab host that are the host's own (mapped to the host root).
# Top-level directories that belong to a lab host (regexes): the TR mounts volumes at
# /kafka_aggr3_vol1, /kafkafsxN1, /data/..., which must land in the host, never on this machine.
HOST_DIRS = ("tmp", "demo", "mnt", "var", "opt", "data", "srv", "home", r"kafka\w*")
# Files under system directories that are the host's own: its fstab (never this machine's).
HOST_FILES = (r"etc/fstab[\w.-]*",)


class LabTarget(Target):
    kind = "lab"

    def __init__(self, inventory: Inventory, confirm: bool = True, echo: bool = True,
                 root: Path | None = None):
        super().__init__(inventory, confirm, echo)
        self.root = Path(root or paths.LAB_STATE)

    # --- the host's file system ---------------------------------------------------------
    def host_root(self, host: Host) -> Path:
        return self.root / "hosts" / host.name

    def host_path(self, host: Host | str, path: str) -> Path:
        """Where an absolute path of a lab host really is."""
        h = self.inventory.host(host) if isinstance(host, str) else host
        return self.host_root(h) / path.lstrip("/")

    def _map_in(self, host: Host, command: str) -> str:
        root = str(self.host_root(host))
        # Not after "host:": that is a path on the NFS server or a remote host
        # (`mount lif:/kafka_fg_vol01 /demo`, `scp host:/tmp/x`), never a local one.
        pat = re.compile(r"(?<![\w./~:-])/(" + "|".join(HOST_DIRS + HOST_FILES)
                         + r")(?=/|\s|$|['\";:,)}])")
        return pat.sub(lambda m: f"{root}/{m.group(1)}", command)

    def _map_out(self, host: Host, text: str) -> str:
        return text.replace(str(self.host_root(host)) + "/", "/") if text else text

    def _env(self, host: Host, extra: dict[str, str]) -> dict[str, str]:
        hr = self.host_root(host)
        env = dict(os.environ)
        env.update({
            # Lab shims first, then this venv's tools (aws, ansible-playbook) as on an admin host.
            "PATH": f"{self.root / 'bin'}:{Path(sys.executable).parent}:"
                    f"{env.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(hr), "KAFKA_HOME": str(hr),
            "LAB_HOST": host.name, "LAB_HOST_ADDRESS": host.address,
            "TR4947_LAB_STATE": str(self.root), "TR4947_HOST_ROOT": str(hr),
            "LOG_DIR": str(hr / "logs"),
            "SSH_ASKPASS": str(hr / ".ssh" / "askpass"), "SSH_ASKPASS_REQUIRE": "force",
        })
        env.update(extra)
        return env

    def _ssh_client(self, hr: Path) -> None:
        """~/.ssh on a lab host: the ONTAP stand-in's SSH port for its addresses (so the TR's
        `ssh fsxadmin@<ip>` runs as written) and an askpass helper that answers the password
        prompt from $LAB_SSH_PASSWORD (the lab's stand-in for a person typing it)."""
        ssh = hr / ".ssh"
        if (ssh / "config").exists():
            return
        ssh.mkdir(parents=True, exist_ok=True, mode=0o700)
        blocks = []
        for h in self.inventory.hosts.values():
            if self.is_ontap(h):
                blocks.append(f"Host {h.address}\n  Port {h.get('ansible_port', 22)}\n")
        blocks.append("Host *\n  StrictHostKeyChecking accept-new\n"
                      f"  UserKnownHostsFile {ssh / 'known_hosts'}\n  LogLevel ERROR\n")
        (ssh / "config").write_text("".join(blocks))
        askpass = ssh / "askpass"
        askpass.write_text('#!/bin/sh\nprintf \'%s\\n\' "$LAB_SSH_PASSWORD"\n')
        askpass.chmod(0o700)
        # OpenSSH reads ~/.ssh from the passwd entry, not $HOME: a shim points it at the
        # lab host's own config.
        shim = self.root / "bin" / "ssh"
        if not shim.exists():
            shim.parent.mkdir(parents=True, exist_ok=True)
            shim.write_text('#!/bin/sh\n# lab shim: the lab host\'s ~/.ssh/config\n'
                            'exec /usr/bin/ssh -F "$HOME/.ssh/config" "$@"\n')
            shim.chmod(0o755)

    # --- Target implementation ----------------------------------------------------------
    def _shell(self, host, command, timeout, env, input):
        hr = self.host_root(host)
        if not self.root.is_dir():
            return Result(host.name, command, 255, "",
                          f"the lab is not up ({self.root} does not exist): run `tr4947 lab up`",
                          0.0, now_iso())
        from ..lab.kafka import prepare_host
        prepare_host(hr, self.root / "bin")
        self._ssh_client(hr)
        (hr / "etc").mkdir(exist_ok=True)
        (hr / "etc" / "fstab").touch(exist_ok=True)     # as on any Linux host
        r = run_local(["bash", "-c", self._map_in(host, command)], host=host.name,
                      label=command, timeout=timeout, env=self._env(host, env), cwd=hr,
                      input=input)
        r.stdout, r.stderr = self._map_out(host, r.stdout), self._map_out(host, r.stderr)
        return r

    def _ontap_password(self, host: Host) -> str:
        import json
        from ..runbook import secrets
        data = json.loads((self.root / "ontap" / "passwords.json").read_text())
        pw = data.get(host.get("ansible_user", "admin"))
        if isinstance(pw, dict):
            pw = pw.get("password")
        secrets.register(pw)
        return pw

    def _ontap(self, host, lines, timeout):
        try:
            pw = self._ontap_password(host)
        except FileNotFoundError:
            return Result(host.name, "\n".join(lines), 255, "",
                          "lab ONTAP is not running: run `tr4947 lab up` first", 0.0, now_iso())
        return ontap_run(host.address, int(host.get("ansible_port", 22)),
                         host.get("ansible_user", "admin"), pw, lines, timeout, host.name,
                         cluster_name=host.get("ontap_cluster_name", host.name))

    def _put(self, host, dest, content):
        started = now_iso()
        f = self.host_path(host, dest)
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(content)
        return Result(host.name, f"put {dest}", 0, f"wrote {dest} ({len(content)} bytes)", "",
                      0.0, started)
