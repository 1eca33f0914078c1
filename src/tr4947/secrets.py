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
# Fields and options that carry a secret whatever its value is: JSON ("k": "v"), Python repr
# ('k': 'v'), YAML and key=value forms; a quoted value is masked whole (spaces and commas
# included). A shell reference (${FSXADMIN_PASSWORD}) or a template ({{ lookup(...) }}) is not
# the secret: it stays readable.
SECRET_FIELD = re.compile(
    r"""(["']?(?:FsxAdminPassword|SvmAdminPassword|AdminPassword|password)["']?[ \t]*[:=][ \t]*)"""
    r"""(?:(["'])(?!\$|\{\{)(.*?)\2|(?![$"'{])([^\s,}\]]+))""", re.I)
SECRET_OPTION = re.compile(r"(--?(?:password|fsx-admin-password|svm-admin-password)[ =])(\S+)", re.I)
#: Every secret the lab makes starts with this, so a leak can be searched for (tests do).
LAB_MARKER = "tr4947-lab-secret-"
_LAB_SECRET = re.compile(re.escape(LAB_MARKER) + r"[A-Za-z0-9_-]+")

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
    text = _LAB_SECRET.sub(MASK, text)
    text = SECRET_FIELD.sub(_mask_field, text)
    return SECRET_OPTION.sub(lambda m: m.group(1) + MASK, text)


def _mask_field(m: re.Match) -> str:
    quote = m.group(2) or ""
    return f"{m.group(1)}{quote}{MASK}{quote}"


def lab_secret(key: bytes, purpose: str) -> str:
    """A secret the lab uses (an ONTAP login, FSx's fsxadmin password): derived from the
    lab's key, so it is never stored in clear, and marked (LAB_MARKER) so that tests can
    search every file a run leaves for it."""
    import base64
    import hashlib
    import hmac
    digest = hmac.new(key, purpose.encode(), hashlib.sha256).digest()
    return LAB_MARKER + base64.urlsafe_b64encode(digest).decode().rstrip("=")[:22]
