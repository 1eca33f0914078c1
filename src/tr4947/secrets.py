"""Keeps secrets out of everything a run records.

Passwords reach the project only through the environment (or ansible-vault, which puts them
there). Any value of an environment variable whose name marks it as a secret is replaced by
``********`` in recorded commands and outputs, whatever the tool that printed it; known
secret-bearing fields (AWS's FsxAdminPassword echo, ``-password`` arguments) are masked too.
"""
from __future__ import annotations

import os
import re

MASK = "********"
SECRET_NAME = re.compile(r"(PASSWORD|PASSWD|SECRET|TOKEN|_KEY$|VAULT)", re.I)
# Fields and options that carry a secret whatever its value is.
SECRET_FIELD = re.compile(
    # A shell reference such as ${FSXADMIN_PASSWORD} is not the secret: leave it readable.
    r'("?(?:FsxAdminPassword|SvmAdminPassword|AdminPassword|password)"?\s*[:=]\s*"?)(?!\$)([^",\s}]+)',
    re.I)
SECRET_OPTION = re.compile(r"(--?(?:password|fsx-admin-password|svm-admin-password)[ =])(\S+)", re.I)

_extra: set[str] = set()


def register(value: str | None) -> None:
    """Mask this value from now on (for secrets read from files, e.g. the lab's passwords)."""
    if value and len(value) >= 4:
        _extra.add(value)


def is_secret(name: str, value: str = "") -> bool:
    """A variable whose name marks it as a secret, or whose value was registered as one."""
    return bool(SECRET_NAME.search(name)) or (bool(value) and value in _extra)


def _known_values() -> list[str]:
    vals = {v for k, v in os.environ.items() if SECRET_NAME.search(k) and len(v) >= 4}
    # Longest first, so a secret that contains another is masked whole.
    return sorted(vals | _extra, key=len, reverse=True)


def redact(text: str) -> str:
    if not text:
        return text
    for value in _known_values():
        text = text.replace(value, MASK)
    text = SECRET_FIELD.sub(lambda m: m.group(1) + MASK, text)
    return SECRET_OPTION.sub(lambda m: m.group(1) + MASK, text)
