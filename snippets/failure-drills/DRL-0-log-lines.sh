# On a broker or controller, after a drill: the lines of Kafka's log an operator would look
# for (PATTERN), written since SINCE (the fault's time, as the log prints it; a stack trace's
# lines count from the line they belong to), each message once (a broker that cannot reach
# its controller says so many times a second).
: "${PATTERN:=Fencing broker|Shrinking ISR|No space left|Failed to acquire lock}"
: "${SINCE:=2026-01-01 00:00:00}"
awk -v since="[$SINCE" -v pat="$PATTERN" '
  /^\[[0-9]/ { ts = substr($0, 1, 20) }
  ts >= since && $0 ~ pat { m = $0; sub(/^\[[^]]*\] /, "", m); if (!(m in seen)) print; seen[m] = 1 }
' logs/server.log | cut -c1-240 | head -n "${LINES:-12}"
