# Lab only, on the NFS broker (DRL-2, DRL-6): what the lab's NFS client layer measured of its
# own outages (one JSON line): reconnections, and for the last few how long each lasted, from
# the connection lost to the new session's first answer.
: "${MOUNTPOINT:=/mnt/data}"
tr4947-nfsctl status "$MOUNTPOINT"
