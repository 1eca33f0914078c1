"""One clustershell login: privilege level, confirmations, prompt, and running lines.

Front ends (the SSH server, tests) feed it lines; it returns ONTAP's text. The only
interactive step is the {y|n} confirmation, for which the caller supplies ``ask``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Awaitable, Callable

from . import audit, cli, commands, state
from .cli import CliError


@dataclass
class Result:
    output: str            # text to print (no trailing newline handling needed)
    error: bool


class Session:
    def __init__(self, root: Path, user: str = "admin", channel: str = "ssh", peer: str = ""):
        self.root = Path(root)
        self.user = user
        self.channel = channel          # ssh | lab (provisioning): in the command log
        self.peer = peer
        self.privilege = "admin"
        self.confirmations = True
        self.separator = " "            # set -showseparator: how -fields output is laid out
        self.cluster_name = state.load(self.root).name

    @property
    def prompt(self) -> str:
        return f"{self.cluster_name}::{'*' if self.privilege != 'admin' else ''}> "

    async def run(self, line: str, ask: Callable[[str], Awaitable[str]]) -> Result:
        """Run one input line (which may hold several ;-separated commands)."""
        outs, failed = [], False
        for one in cli.split_commands(line):
            r = await self._one(one, ask)
            if r.output:
                outs.append(r.output)
            failed |= r.error
            if r.error:
                break                  # like the clustershell: stop at the first error
        return Result("\n".join(outs), failed)

    def run_sync(self, line: str, answer: str = "y") -> Result:
        """Synchronous form for tests and scripts; confirmations get ``answer``."""
        import asyncio

        shown = []

        async def ask(prompt: str) -> str:
            shown.append(prompt + answer + "\n")
            return answer
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            r = asyncio.run(self.run(line, ask))
        else:                   # called from a running loop (a notebook): run it beside it
            from concurrent.futures import ThreadPoolExecutor
            with ThreadPoolExecutor(1) as pool:
                r = pool.submit(asyncio.run, self.run(line, ask)).result()
        return Result("".join(shown) + r.output, r.error)

    async def _one(self, line: str, ask) -> Result:
        try:
            parsed = cli.parse(commands.TREE, line, self.privilege)
        except CliError as exc:
            audit.record(self.root, self.channel, self.user, self.peer, line, True, False)
            return Result(str(exc), True)
        if not isinstance(parsed, cli.Node) and not parsed.help:
            r = await self._run(parsed, line, ask)
            audit.record(self.root, self.channel, self.user, self.peer, line,
                         audit.reads_only(" ".join(parsed.command.path)), not r.error)
            return r
        return await self._run(parsed, line, ask)

    async def _run(self, parsed, line: str, ask) -> Result:
        if isinstance(parsed, cli.Node):
            return Result(cli.directory_help(parsed, self.privilege), False)
        if parsed.help:
            return Result(cli.help_text(parsed.command, self.privilege), False)
        warning = parsed.command.confirm(parsed.args, self) if parsed.command.confirm else None
        if warning:
            # ONTAP prints the warning, reads y/n; anything but y leaves things unchanged.
            reply = (await ask("\n" + warning)).strip().lower()
            if reply not in ("y", "yes"):
                return Result("", False)
        try:
            out = commands.dispatch(parsed.command, self, parsed.args)
        except CliError as exc:
            return Result(str(exc), True)
        except FileNotFoundError as exc:
            return Result(f"Error: command failed: {exc}", True)
        except state.UnsafePath as exc:
            # A path that would leave the lab state dir: refused, nothing was touched.
            return Result(f"Error: command failed: {exc}", True)
        return Result(out, False)
