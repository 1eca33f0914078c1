"""Adding the guide's NFS mount lines to a host's /etc/fstab, the way an operator edits it.

A snippet's ``.fstab`` file shows the lines as the guide prints them: the TR's lines with the
lab's NFS server addresses. On a target, each line's server is replaced by the target's own
(``with_servers``), and the lines are *added* to the host's file by one shell script
(``ADD_SCRIPT``, POSIX sh and awk, shown in the transcript exactly as it runs):

* a line the file already has (same fields; spacing does not matter) is not added again, so a
  second run adds nothing;
* a line for a mount point the file already mounts from something else is an error, and the
  file is left as it was (two lines for one mount point would mount twice or hide each other);
* otherwise the file is first copied to the backup (``cp -p``), then the missing lines are
  appended at its end; nothing else in the file changes.

The lines reach the script in the environment variable FSTAB_LINES, so no shell ever reads
them as code.
"""
from __future__ import annotations

import ipaddress
import re
from typing import Mapping

from ..netguard import LAB_RANGE
from .files import BACKUP_SUFFIX, plain_path, snippet_path

FSTAB = "/etc/fstab"
LINES_VAR = "FSTAB_LINES"

ADD_SCRIPT = r"""# Add the lines in $FSTAB_LINES to {fstab}: a line already there is not added twice and
# nothing else in the file changes; the file is copied to {backup} first.
set -eu
fstab={fstab} backup={backup}
missing=$(awk -v fstab="$fstab" '
  /^[ \t]*(#|$)/ {{ next }}
  {{ $1 = $1; have[$0] = 1; at[$2] = $0 }}
  END {{
    n = split(ENVIRON["FSTAB_LINES"], add, "\n")
    for (i = 1; i <= n; i++) {{
      $0 = add[i]
      if (NF < 2 || $1 ~ /^#/) continue
      $1 = $1
      if ($0 in have) continue
      if ($2 in at) {{
        print fstab " already mounts " $2 " with: " at[$2] "; nothing changed" > "/dev/stderr"
        bad = 1
      }}
      print add[i]; have[$0] = 1; at[$2] = $0
    }}
    exit bad
  }}' "$fstab")
if [ -z "$missing" ]; then
  echo "$fstab already has these lines: nothing added"
  exit 0
fi
cp -p "$fstab" "$backup"
# A last line without its newline would run into the first added one.
if [ -n "$(tail -c 1 "$fstab")" ]; then echo >> "$fstab"; fi
printf '%s\n' "$missing" >> "$fstab"
echo "$(printf '%s\n' "$missing" | wc -l | tr -d ' ') line(s) added to $fstab; the file as it was: $backup"
"""

_ADDED = re.compile(r"^(\d+) line\(s\) added to ", re.M)


def add_script(fstab: str = FSTAB, backup: str | None = None) -> str:
    return ADD_SCRIPT.format(fstab=plain_path(fstab, "fstab"),
                             backup=plain_path(backup or fstab + BACKUP_SUFFIX, "fstab"))


def entries(text: str) -> list[str]:
    """The mount lines of an fstab text (comments and blank lines left out)."""
    return [l for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#")]


def mount_points(snippet: str) -> list[str]:
    """The mount points of an fstab snippet (snippets/<path>), in its order."""
    return [line.split()[1] for line in entries(snippet_path(snippet).read_text())]


def server(line: str) -> str | None:
    """The NFS server of a mount line (``server:/path ...``), or None for other lines."""
    spec = line.split()[0] if line.split() else ""
    m = re.fullmatch(r"(\[[^\]]+\]|[^:/\s]+):/\S*", spec)
    return m.group(1) if m else None


def with_servers(text: str, servers: Mapping[str, str] | str | None) -> str:
    """The lines with each NFS server replaced: ``servers`` maps the address a line shows to
    the target's, or is one address for every line. Comments and other lines stay."""
    if not servers:
        return text
    out = []
    for line in text.splitlines(keepends=True):
        s = None if line.lstrip().startswith("#") else server(line)
        if s is not None:
            new = servers if isinstance(servers, str) else servers.get(s, s)
            line = line.replace(f"{s}:/", f"{new}:/", 1)
        out.append(line)
    return "".join(out)


def lab_servers(text: str, own: set[str] = frozenset()) -> list[str]:
    """Servers of the mount lines that are lab addresses (the lab network, netguard.LAB_RANGE, or
    loopback) and not among ``own`` (the target's own data LIFs): an address from the
    guide's snippets, which must never go into another system's fstab."""
    found = []
    for line in entries(text):
        s = server(line)
        try:
            a = ipaddress.ip_address(s.strip("[]")) if s else None
        except ValueError:
            continue
        if a is not None and (a.is_loopback or a in LAB_RANGE) and s not in own \
                and s not in found:
            found.append(s)
    return found


def added(result) -> int:
    """How many lines an ADD_SCRIPT run added (0: nothing added or only planned)."""
    m = _ADDED.search(getattr(result, "stdout", "") or "")
    return int(m.group(1)) if m else 0
