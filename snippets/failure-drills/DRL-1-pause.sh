# Lab hook, on the NFS broker: its NFS mount stops answering for PAUSE_SECONDS. Every request
# waits, as on a hard mount while the server is away, and goes on when the pause ends. (A
# real client has no such switch: see the page for what this stands for.) Prints the time
# the pause began.
: "${MOUNTPOINT:=/mnt/data}" "${PAUSE_SECONDS:=10}"
tr4947-nfsctl pause "$MOUNTPOINT" "$PAUSE_SECONDS" && date +%s.%N
