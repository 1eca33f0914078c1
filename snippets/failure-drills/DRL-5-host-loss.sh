# On the broker host, at AT (epoch seconds): the host fails as a whole, at once. Its link goes
# down first (no peer hears a goodbye, as from a machine that loses power), then every
# process on it dies by SIGKILL (Kafka, the NFS client, all of them but the host's init and
# SSH server, kept so the host can be brought back) and the broker's address goes with it.
# After DOWN_SECONDS the link comes back without that address: a host repaired and powered
# on, out of the cluster.
: "${DEV:=eth0}" "${ADDRESS:=198.18.4.1/16}" "${AT:?}" "${DOWN_SECONDS:=10}"
nohup setsid sh -c '
  wait_until() { sleep "$(awk -v t="$1" -v now="$(date +%s.%N)" "BEGIN { d = t - now; print (d > 0 ? d : 0) }")"; }
  wait_until "$AT"
  ip link set "$DEV" down; date +%s.%N > /run/drill-host-down
  kill -KILL $(ps -e -o pid= -o comm= | awk -v me=$$ "\$1 != 1 && \$1 != me && \$2 != \"sshd\" { print \$1 }") 2>/dev/null
  ip addr del "$ADDRESS" dev "$DEV"
  sleep "$DOWN_SECONDS"
  ip link set "$DEV" up; date +%s.%N > /run/drill-host-up
' > /dev/null 2>&1 < /dev/null &
echo "$(hostname) fails at $(date -d "@${AT%.*}" +%T); back on the network ${DOWN_SECONDS} s later, without $ADDRESS"
