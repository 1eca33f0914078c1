"""Lab tests build labs of their own and never touch a developer's lab.

A test lab is the lab inventory copied with every 198.18.x.y address moved to 198.19.x.y (the
other half of RFC 2544's benchmarking range; the default lab is 198.18.0.0/16) and every path
of the default state dir (/tmp/tr4947-lab: SSH key, known_hosts, the REST CA bundle) moved to
a state dir under pytest's tmp dir. Its id is a hash of that dir, so its namespaces and
control port have names of their own.

A module brings its lab up once (the storage side and the clients take some seconds; clusters
only where a module needs them), and its teardown always takes it down and then asserts that
nothing of it is left (Lab.leftovers(): namespaces, the control port, processes, the state
dir). Test labs share 198.19.0.0/16, so only one runs at a time: modules run one after the
other and each takes its lab down before the next starts.

``paths.LAB_STATE`` is read when tr4947 is imported: Lab gets ``root=`` explicitly, and
LabTarget (which builds its own Lab from the inventory) sees the test dir because
``paths.LAB_STATE`` is patched while the lab is up (and TR4947_LAB_STATE set for processes).
"""
from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeVar

import pytest

from tr4947 import paths, targets
from tr4947.wait import until
from tr4947.lab import remote_inventory
from tr4947.lab.lab import Lab, LabError, preflight

from ..support import inventory_copy

T = TypeVar("T")

LAB_INVENTORY = paths.INVENTORY / "lab" / "hosts.yml"
DEFAULT_STATE = "/tmp/tr4947-lab"
COMMAND_LOG = "/var/log/tr4947/commands.log"
DECODE_LOG = rf"""[ -f {COMMAND_LOG} ] || exit 0
while IFS=$'\t' read -r _time _client quoted; do
  eval "printf '%s\0' $quoted"
done < {COMMAND_LOG}"""


#: The lab's JVM options for Kafka, and a test lab's: the same with the JIT's first tier only.
#: A test lab's brokers start often and serve little load, so C2's compilations (most of a
#: young broker's CPU) would buy nothing but time on a busy 2-core machine; what the tests
#: check (replication, timeouts, what Kafka logs and refuses) does not depend on it. The
#: runbook's labs, whose figures are published, keep the JVM's default.
LAB_JVM_OPTS = "kafka_jvm_opts: -XX:+UseSerialGC "
TEST_JVM_OPTS = "kafka_jvm_opts: -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "


def copy_inventory(dest: Path, state: Path,
                   replace: dict[str, str] | None = None) -> Path:
    """The lab inventory (hosts.yml, group_vars/, host_vars/) on 198.19.0.0/16 with its state
    in ``state``, its brokers' JIT limited to its first tier (TEST_JVM_OPTS); ``replace``:
    further text to change in it (each must be found)."""
    def edit(text: str) -> str:
        text = text.replace(LAB_JVM_OPTS, TEST_JVM_OPTS)
        for old, new in (replace or {}).items():
            text = text.replace(old, new)
        return re.sub(r"\b198\.18\.", "198.19.", text).replace(DEFAULT_STATE, str(state))
    f = inventory_copy.copy_inventory(LAB_INVENTORY.parent, Path(dest), edit)
    left = inventory_copy.tree_text(Path(dest))
    assert "198.18." not in left and DEFAULT_STATE not in left
    assert TEST_JVM_OPTS in left, f"no '{LAB_JVM_OPTS}' in the lab inventory to edit"
    for old, new in (replace or {}).items():
        assert new in left, f"no '{old}' in the lab inventory to replace"
    return f


def remote_copy(dest: Path, lab_inventory: Path) -> Path:
    """The same hosts described as a remote site (the lab-remote idea: the lab's inventory
    without its lab-only settings, target_kind: lab among them), so default-deny applies."""
    tree = remote_inventory.render(Path(lab_inventory).parent)
    assert not any(re.search(r"(?m)^\s*target_kind:", t) for t in tree.values())
    remote_inventory.write(tree, Path(dest))
    return Path(dest) / "hosts.yml"


@dataclass
class OwnLab:
    base: Path
    root: Path
    inventory: Path                        # target_kind: lab
    remote: Path                           # the same hosts as a real target
    lab: Lab
    _targets: list = field(default_factory=list)

    @classmethod
    def make(cls, base: Path, replace: dict[str, str] | None = None) -> "OwnLab":
        root = Path(base) / "state"
        inv = copy_inventory(Path(base) / "lab", root, replace)
        remote = remote_copy(Path(base) / "lab-remote", inv)
        return cls(Path(base), root, inv, remote, Lab(inv, root=root, echo=print))

    def target(self):
        """The lab as a LabTarget (confirm is always on)."""
        t = targets.open(str(self.inventory), echo=False)
        assert t.kind == "lab" and t.lab.root == self.root.resolve(), t.lab.root
        self._targets.append(t)
        return t

    def real_target(self, confirm: bool = False):
        """The same hosts opened as a real site: default-deny, credentials as a reader's."""
        t = targets.open(str(self.remote), confirm=confirm, echo=False)
        assert t.kind == "real" and t.confirm is confirm
        self._targets.append(t)
        return t

    def exec(self, host: str, command: str, **kw):
        """The lab's back door (nsenter): looks at a host without logging a command there."""
        return self.lab.exec(host, command, **kw)

    def commands(self, host: str) -> list[str]:
        """Every command a client sent the host over SSH, as its ForceCommand logged it (one
        line each, bash's printf %q quoting; bash decodes it)."""
        out = self.exec(host, DECODE_LOG).stdout
        return out.split("\0")[:-1]

    def close_targets(self) -> None:
        for t in self._targets:
            t.close()
        self._targets.clear()


def require_lab() -> None:
    """Skip (saying why) only when this machine cannot build a lab at all."""
    try:
        preflight()
    except LabError as exc:
        pytest.skip(f"this machine cannot run the lab: {exc}")


@contextlib.contextmanager
def own_lab(base: Path, clusters=(), kafka_state: str = "installed", up: bool = True,
            replace: dict[str, str] | None = None):
    """An OwnLab (brought up with ``clusters`` unless ``up`` is false; ``replace``: text to
    change in its inventory, copy_inventory), always taken down; then nothing of it may be
    left."""
    require_lab()
    tl = OwnLab.make(base, replace)
    mp = pytest.MonkeyPatch()
    mp.setenv("TR4947_LAB_STATE", str(tl.root))
    mp.setattr(paths, "LAB_STATE", tl.root)
    try:
        if up:
            tl.lab.up(list(clusters), kafka_state=kafka_state)
        yield tl
    finally:
        try:
            tl.close_targets()
            tl.lab.down()
        finally:
            mp.undo()
        left = tl.lab.leftovers()
        assert not left, f"the test lab left: {left}"



def wait_for(check: Callable[[], T], timeout: float, what: str,
             seen: Callable[[], object] | None = None, interval: float = 0.5) -> T:
    """tr4947.wait.until as a test's assertion: after ``timeout`` an AssertionError that says
    what was waited for and what was seen last."""
    try:
        return until(check, timeout, interval, what, seen and (lambda: str(seen())))
    except TimeoutError as exc:
        raise AssertionError(str(exc)) from None
