# Broker 1 of each cluster: does its listener accept a TCP connection?
# (The TR uses an interactive telnet; this is the same check, non-interactively.)
: "${BROKERS:=198.18.1.1 198.18.2.1}"
for broker in $BROKERS; do
  if timeout 5 bash -c "exec 3<>/dev/tcp/$broker/9092" 2>/dev/null; then
    echo "$broker:9092 connected"
  else
    echo "$broker:9092 unable to connect"
  fi
done
