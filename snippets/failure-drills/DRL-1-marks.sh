# On the broker host, after the heal: when its traffic to the LIF was really dropped, and when
# it flowed again.
cat /run/drill-lif-dropped /run/drill-lif-back
