"""One convention for every command line of the project (tr4947, tr4947 runbook,
bin/benchmark), as Kafka's own tools do it:

* a usage error prints the usage, ``<prog>: error: <what was wrong>`` and where to look, and
  exits with 2; nothing has run;
* a refused input (a file or value that fails validation) is one line,
  ``<prog>: error: <file, line, field: what is allowed>``, exit 2, no traceback;
* a failure while running exits 1, an interrupt 130;
* ``--help`` teaches: a description, then examples.
"""
from __future__ import annotations

import argparse
import sys

USAGE_ERROR, FAILED = 2, 1


class Parser(argparse.ArgumentParser):
    """argparse with the project's usage errors (see the module doc)."""

    def __init__(self, *args, **kw):
        kw.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kw)

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}\n"
                               f"Run '{self.prog} --help' for examples.\n")


def refuse(prog: str, message: str) -> int:
    """A refused input: one line on stderr; returns the exit status (2)."""
    print(f"{prog}: error: {' '.join(str(message).split())}", file=sys.stderr)
    return USAGE_ERROR
