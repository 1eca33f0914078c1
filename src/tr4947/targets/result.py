"""What a step on a target returns: one host's Result (or a ResultSet for a group), and the
error a failed step raises."""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from .. import secrets


@dataclass
class Result:
    host: str
    command: str
    exit_code: int | None           # None: planned (dry run) or killed by the timeout
    stdout: str
    stderr: str
    duration: float
    started: str                    # ISO 8601, UTC
    planned: bool = False
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 or self.planned

    def check(self) -> "Result":
        if not self.ok:
            raise TargetError.from_result(self)
        return self

    @property
    def output(self) -> str:
        return self.stdout + (("\n" if self.stdout and self.stderr else "") + self.stderr)

    def transcript(self, prompt: str = "$ ") -> str:
        """Console transcript (command + output) for rendering; secrets masked."""
        return secrets.redact(f"{prompt}{self.command}\n{self.output}".rstrip() + "\n")

    def __str__(self) -> str:
        return self.transcript()


class ResultSet(list):
    """Results of one command on every host of a group."""

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self)

    @property
    def planned(self) -> bool:
        return any(r.planned for r in self)

    def check(self) -> "ResultSet":
        for r in self:
            r.check()
        return self

    def __str__(self) -> str:
        return "\n".join(f"[{r.host}]\n{r.transcript()}" for r in self)


class TargetError(RuntimeError):
    """A step failed: which host, which command, its exit code and the end of its output."""

    def __init__(self, host: str, command: str, exit_code: int | None, output: str,
                 reason: str = "", result: Result | None = None):
        self.host, self.command, self.exit_code = host, command, exit_code
        self.output_tail = secrets.redact(output[-3000:])
        self.result = result
        what = reason or (f"exit code {exit_code}" if exit_code is not None else "no exit code")
        super().__init__(f"{secrets.redact(command)!s} failed on {host}: {what}\n"
                         f"--- output (tail) ---\n{self.output_tail}")

    @classmethod
    def from_result(cls, r: Result) -> "TargetError":
        reason = "timed out after %.0fs (process group killed)" % r.duration if r.timed_out else ""
        return cls(r.host, r.command, r.exit_code, r.output, reason, r)


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
