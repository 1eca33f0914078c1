# On each broker host, before the benchmark: sample the broker's CPU time once a second as the
# kernel accounts it (/proc/<pid>/stat: user and system clock ticks), with any FUSE daemon on
# the host (the lab's NFS client process) beside it, until `kill $(cat /tmp/cpu-sampler.pid)`.
# Each line of /tmp/cpu-samples.tsv: time, ticks per second, broker ticks, FUSE ticks.
: "${INTERVAL:=1}"; export INTERVAL
broker=$(pgrep -f 'kafka\.Kafka' | head -n 1)
[ -n "$broker" ] || { echo "no Kafka broker running on $(hostname)" >&2; exit 1; }
fuse=$(pgrep -x tr4947-nfs | tr '\n' ' ')
nohup bash -c '
  hz=$(getconf CLK_TCK)
  ticks() { local t=0 p f; for p in "$@"; do
              read -r -a f < "/proc/$p/stat" 2>/dev/null || continue; t=$((t + f[13] + f[14]))
            done; echo "$t"; }
  broker=$1; shift
  while :; do echo "$(date +%s.%N) $hz $(ticks "$broker") $(ticks "$@")"; sleep "$INTERVAL"; done
' sampler "$broker" $fuse > /tmp/cpu-samples.tsv 2> /dev/null < /dev/null &
echo $! > /tmp/cpu-sampler.pid
echo "sampling broker pid $broker${fuse:+, FUSE pid(s) $fuse} every ${INTERVAL} s: /tmp/cpu-samples.tsv"
