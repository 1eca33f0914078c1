# On the broker host: drop every packet between it and its NFS server (the data LIF its
# Kafka volume is mounted from) from AT to HEAL_AT (epoch seconds), as a failed switch port
# or a firewall change would. The rules are an nftables table of their own, which the heal
# deletes; nothing else on the host changes, and the host stays reachable (only the LIF's
# address is dropped). The rules are checked now; both steps are scheduled here, detached,
# so the heal happens whatever becomes of this session.
set -e
: "${MOUNTPOINT:=/mnt/data}" "${AT:?}" "${HEAL_AT:?}"
command -v nft > /dev/null || {
  echo "$(hostname): nft is not installed; this drill drops the LIF's traffic with nftables" >&2
  exit 3
}
LIF=$(findmnt -no SOURCE --target "$MOUNTPOINT" | sed -E 's/^\[?([^]]*)\]?:\/.*$/\1/')
case "$LIF" in
  *:*) FAMILY=ip6 ;;
  *.*) FAMILY=ip ;;
  *) echo "$(hostname): $MOUNTPOINT is not mounted over NFS (source: ${LIF:-none})" >&2; exit 3 ;;
esac
cat > /run/drill-lif-drop.nft <<EOF
table inet tr4947_drill {
  chain out { type filter hook output priority 0; $FAMILY daddr $LIF drop; }
  chain in { type filter hook input priority 0; $FAMILY saddr $LIF drop; }
}
EOF
nft -c -f /run/drill-lif-drop.nft
rm -f /run/drill-lif-dropped /run/drill-lif-back
export AT HEAL_AT
nohup setsid sh -c '
  wait_until() { sleep "$(awk -v t="$1" -v now="$(date +%s.%N)" "BEGIN { d = t - now; print (d > 0 ? d : 0) }")"; }
  wait_until "$AT";      nft -f /run/drill-lif-drop.nft;      date +%s.%N > /run/drill-lif-dropped
  wait_until "$HEAL_AT"; nft delete table inet tr4947_drill; date +%s.%N > /run/drill-lif-back
' > /dev/null 2>&1 < /dev/null &
echo "$(hostname): traffic to and from $LIF dropped at $(date -d "@${AT%.*}" +%T), back at $(date -d "@${HEAL_AT%.*}" +%T)"
