# After the drills, on each broker: its server.properties as DRL-0 found it (FOUND, kept
# before the first switch of configuration), and the copies the drills made removed. It says
# whether the file had changed; the broker restarts only where a setting the drills switch
# differs, and runs on the file as found from then on.
set -e
: "${CONFIG:=config/server.properties}" "${FOUND:=$CONFIG.drills-found}"
: "${SWITCHED:=$CONFIG.drills-switch.bak}"
if cmp -s "$FOUND" "$CONFIG"; then
  echo "unchanged: $CONFIG"
else
  cp -p "$FOUND" "$CONFIG"
  echo "restored: $CONFIG"
fi
rm -f "$FOUND" "$SWITCHED"
grep -E '^replica\.lag\.time\.max\.ms=' "$CONFIG" || echo "(replica.lag.time.max.ms: Kafka's default)"
