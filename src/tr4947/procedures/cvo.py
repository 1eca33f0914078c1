"""Cloud Volumes ONTAP chapter (CVO-1..CVO-7): checks of what the storage steps made.

* CVO-4: the NFS connections ONTAP lists, against what the broker's own mounts predict (one set
  of ``nconnect`` connections per server address and NFS version, shared by every mount of
  that address, as the Linux client shares a transport);
* CVO-5: every ``log.dirs`` entry of the broker's configuration on one of its NFS mounts.
"""
from __future__ import annotations

import re


def nfs_mounts(output: str) -> dict[str, str]:
    """{mount point: server:/path} from ``df -h`` or ``mount`` output."""
    out = {}
    for line in output.splitlines():
        f = line.split()
        if not f or ":/" not in f[0]:
            continue
        if " on " in line and " type " in line:           # mount: src on dir type nfs4 (...)
            out[line.split(" on ", 1)[1].split(" type ")[0]] = f[0]
        else:                                               # df -h: src size used avail use% dir
            out[f[-1]] = f[0]
    return out


def connections(ontap_output: str, mount_output: str) -> dict:
    """CVO-4: ONTAP's listing (rows and its own count) and the mounts' prediction."""
    rows = [line.split() for line in ontap_output.splitlines()
            if re.fullmatch(r"\S+ +\d+ +\S+ *", line)]
    shown = re.search(r"(\d+) entries were displayed", ontap_output)
    mounts = [line for line in mount_output.splitlines() if " type nfs" in line]
    sets: dict[tuple[str, str], int] = {}
    for line in mounts:
        server = line.split(":", 1)[0]
        opts = dict(o.partition("=")[::2] for o in line.split("(", 1)[1].rstrip(")").split(","))
        sets.setdefault((server, opts["vers"]), int(opts.get("nconnect", 1)))
    return {"rows": len(rows), "shown": int(shown.group(1)) if shown else None,
            "mounts": len(mounts), "sets": sets, "expected": sum(sets.values())}


def log_dirs_on_nfs(properties: str, df_output: str) -> list[list[str]]:
    """[log dir, the NFS volume it is on (or NOT ON NFS)] for every log.dirs entry."""
    props = dict(line.split("=", 1) for line in properties.splitlines()
                 if "=" in line and not line.lstrip().startswith("#"))
    nfs = nfs_mounts(df_output)
    rows = []
    for d in props["log.dirs"].split(","):
        mp = max((m for m in nfs if d == m or d.startswith(m + "/")), key=len, default=None)
        rows.append([d, nfs[mp] if mp else "NOT ON NFS"])
    return rows
