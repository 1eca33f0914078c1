# Lab hook, on the NFS broker: its NFS mount stops answering for PAUSE_SECONDS. Every request
# waits, as on a hard mount while the server is away, and goes on when the pause ends. (A
# real client has no such switch: see the page for what this stands for.) The layer's status
# (one JSON line) then says how much of the pause is left, and `date` when it said so.
: "${MOUNTPOINT:=/mnt/data}" "${PAUSE_SECONDS:=10}"
tr4947-nfsctl pause "$MOUNTPOINT" "$PAUSE_SECONDS"
tr4947-nfsctl status "$MOUNTPOINT"
date +%s.%N
