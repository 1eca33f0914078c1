# On the client: stop the writes that filled the volume.
kill "$(cat /tmp/drill-fill.pid)" 2>/dev/null; tail -n 2 /tmp/drill-fill.log
