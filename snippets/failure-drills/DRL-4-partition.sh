# On the broker host: cut its link to the network at AT and bring it back at HEAL_AT (epoch
# seconds). The control node reaches the host over this same link, so both steps are
# scheduled here first, detached, and the command returns at once.
: "${DEV:=eth0}" "${AT:?}" "${HEAL_AT:?}"
nohup setsid sh -c '
  wait_until() { sleep "$(awk -v t="$1" -v now="$(date +%s.%N)" "BEGIN { d = t - now; print (d > 0 ? d : 0) }")"; }
  wait_until "$AT";      ip link set "$DEV" down; date +%s.%N > /run/drill-link-down
  wait_until "$HEAL_AT"; ip link set "$DEV" up;   date +%s.%N > /run/drill-link-up
' > /dev/null 2>&1 < /dev/null &
echo "$(hostname): $DEV down at $(date -d "@${AT%.*}" +%T), up again at $(date -d "@${HEAL_AT%.*}" +%T)"
