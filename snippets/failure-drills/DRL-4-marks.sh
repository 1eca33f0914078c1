# On the broker host, after the heal: when its link really went down and came back up.
cat /run/drill-link-down /run/drill-link-up
