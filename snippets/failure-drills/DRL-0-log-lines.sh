# On a broker or controller, after a drill: the lines of Kafka's log an operator would look
# for (PATTERN), written since SINCE (the fault's time, as the log prints it).
: "${PATTERN:=Shrinking ISR|Expanding ISR|fenc|No space left|offline|Halting|Failed to acquire lock}"
: "${SINCE:=2026-01-01 00:00:00}"
grep -E "$PATTERN" logs/server.log | awk -v since="[$SINCE" 'substr($0, 1, 20) >= since' \
  | cut -c1-240 | tail -n "${LINES:-12}"
