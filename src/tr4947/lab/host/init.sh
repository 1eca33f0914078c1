#!/bin/bash
# pid 1 of a lab host, started by tr4947.lab.hosts as
#   ip netns exec <netns> unshare --mount --pid --uts --fork --kill-child --propagation private \
#     env -i HOST_NAME=... HOST_DIR=... HOST_BINDS=... bash init.sh COMMAND...
# so it runs in the host's own network, mount, pid and UTS namespaces. It builds the host's
# root file system and then becomes tini, which runs COMMAND (sshd for a Linux host, the
# stand-in's servers for ONTAP and AWS) and reaps orphans. Killing it (SIGKILL from the lab)
# ends every process of the host, and with them its mounts.
#
# The root is an overlay of this machine's root (read-only underneath) with the host's own
# upper directory: what a host writes (/demo, /etc/fstab, /opt/kafka/config, /tmp...) lands
# in $HOST_DIR/upper and nowhere else. HOST_BINDS names directories shared with the lab
# (the storage stand-in's volumes), bound at the same path.
set -euo pipefail
: "${HOST_NAME:?}" "${HOST_DIR:?}"
root=$HOST_DIR/root
mount -t overlay overlay \
  -o "lowerdir=/,upperdir=$HOST_DIR/upper,workdir=$HOST_DIR/work" "$root"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"              # this namespace's interfaces in /sys/class/net
mount --rbind /dev "$root/dev"                # /dev/fuse for the NFS client's FUSE mounts
mount -t tmpfs -o mode=755 tmpfs "$root/run"
mkdir -p "$root/run/sshd"
IFS=: read -r -a binds <<< "${HOST_BINDS:-}"
for d in "${binds[@]}"; do
  [ -n "$d" ] || continue
  mkdir -p "$root$d"
  mount --bind "$d" "$root$d"
done
hostname "${HOST_NAME//_/-}"          # RFC 1123: no underscores
exec chroot "$root" /usr/bin/tini -s -g -- "$@"
