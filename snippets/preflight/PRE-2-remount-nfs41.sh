# PRE-2 on a broker, with Kafka stopped on it: pin NFSv4.1 for each mount point in $MOUNTS,
# then unmount and mount it again so the pinned version is the one in use.
# - A mount point with an NFS line in /etc/fstab gets vers=4.1 in that line's options
#   (replacing `defaults` and any vers=, nfsvers= or minorversion=; the rest stays).
# - A mount point mounted by hand, without a line, gets one, made from the mount in use, so
#   the next boot mounts it the same way.
# Every mount point is checked before anything changes; the file ($FSTAB, default /etc/fstab)
# is copied to <file>.tr4947-pre2.bak first.
set -eu
: "${MOUNTS:?set MOUNTS to the mount points to pin, separated by spaces}"
fstab=${FSTAB:-/etc/fstab}
for mp in $MOUNTS; do
  mount | awk -v mp="$mp" '$2 == "on" && $3 == mp && $5 ~ /^nfs4?$/ { ok = 1 } END { exit !ok }' ||
    { echo "$mp is not an NFS mount on $(hostname): nothing changed" >&2; exit 1; }
done
cp -p "$fstab" "$fstab.tr4947-pre2.bak"
for mp in $MOUNTS; do
  src=$(mount | awk -v mp="$mp" '$2 == "on" && $3 == mp { print $1; exit }')
  awk -v mp="$mp" -v src="$src" '
    !/^[ \t]*#/ && $2 == mp && $3 ~ /^nfs4?$/ {
      n = split($4, o, ","); opts = "vers=4.1"
      for (i = 1; i <= n; i++)
        if (o[i] != "defaults" && o[i] !~ /^(nfsvers|vers|minorversion)=/) opts = opts "," o[i]
      $3 = "nfs"; $4 = opts; found = 1
    }
    { print }
    END { if (!found) print src " " mp " nfs vers=4.1 0 0" }
  ' "$fstab" > "$fstab.tr4947-pre2.new"
  cat "$fstab.tr4947-pre2.new" > "$fstab"
  rm -f "$fstab.tr4947-pre2.new"
  umount "$mp"
  mount -T "$fstab" "$mp"
  awk -v mp="$mp" '!/^[ \t]*#/ && $2 == mp' "$fstab"
  mount | awk -v mp="$mp" '$3 == mp'
done
