"""How long an NFS client waits for a server that does not answer, from its mount options, as
nfs(5) describes it for NFS over TCP: ``hard`` (the default) or ``soft``, ``timeo`` (tenths of
a second before the first retransmission; 600 over TCP) and ``retrans`` (retransmissions
before the major timeout; 2).

After each retransmission the wait grows by ``timeo`` (linear backoff), each wait at most
600 s. When the last one runs out (the major timeout), a soft mount fails the request with
EIO and a hard one logs "server not responding, still trying" and goes on waiting. Shared by
the lab's mount shim (which gives its NFS layer the major timeout) and the drills (which
say how long a soft mount lasted before its errors)."""
from __future__ import annotations

from dataclasses import dataclass

DEFAULT_TIMEO = 600         # deciseconds, over TCP
DEFAULT_RETRANS = 2
MAX_RPC_WAIT_S = 600.0      # no single wait is longer


def major_timeout_s(timeo: int = DEFAULT_TIMEO, retrans: int = DEFAULT_RETRANS) -> float:
    """Seconds from a request's first send to its major timeout: the first send waits
    ``timeo`` tenths of a second, each of the ``retrans`` retransmissions ``timeo`` longer
    than the one before, each at most 600 s. The defaults give 60 + 120 + 180 = 360 s."""
    step = _seconds(timeo)
    return sum(min(k * step, MAX_RPC_WAIT_S) for k in range(1, int(retrans) + 2))


def _seconds(timeo: int) -> float:
    """timeo (tenths of a second) in seconds; 0 counts as the least the client waits, 0.1 s."""
    return max(int(timeo), 1) / 10


@dataclass(frozen=True)
class Timeouts:
    soft: bool = False
    timeo: int = DEFAULT_TIMEO
    retrans: int = DEFAULT_RETRANS

    @property
    def timeo_s(self) -> float:
        return _seconds(self.timeo)

    @property
    def major_s(self) -> float:
        return major_timeout_s(self.timeo, self.retrans)

    @property
    def words(self) -> str:
        """``soft,timeo=50,retrans=1`` as the mount shows it."""
        return f"{'soft' if self.soft else 'hard'},timeo={self.timeo},retrans={self.retrans}"


def from_options(options: str) -> Timeouts:
    """The timeouts a comma-separated option string asks for (the last of hard, soft and
    softerr wins; other options are not looked at). A timeo or retrans that is not a whole
    number is refused with ValueError."""
    soft, timeo, retrans = False, DEFAULT_TIMEO, DEFAULT_RETRANS
    for o in (options or "").split(","):
        key, _, val = o.strip().partition("=")
        if key in ("soft", "softerr", "hard"):
            soft = key != "hard"
        elif key in ("timeo", "retrans"):
            if not val.isdigit():
                raise ValueError(f"{key}={val!r}: give a whole number "
                                 f"({'tenths of a second' if key == 'timeo' else 'retransmissions'})")
            timeo, retrans = (int(val), retrans) if key == "timeo" else (timeo, int(val))
    return Timeouts(soft, timeo, retrans)
