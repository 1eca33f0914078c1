"""What a host's ``df -h`` or ``mount`` says is mounted over NFS."""
from __future__ import annotations


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
