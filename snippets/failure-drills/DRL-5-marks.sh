# On the failed host, once it is back: when it went down and came back.
cat /run/drill-host-down /run/drill-host-up
