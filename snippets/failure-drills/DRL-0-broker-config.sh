# On broker 1: the settings it was started with that decide how a drill's fault plays out:
# how long a follower may stop fetching before it leaves the ISR, how many replicas must
# acknowledge, whether an out-of-sync replica may become leader. A key the file leaves out (no
# line) has Kafka's default (replica.lag.time.max.ms=30000, min.insync.replicas=1,
# unclean.leader.election.enable=false).
grep -E '^(replica\.lag\.time\.max\.ms|min\.insync\.replicas|unclean\.leader\.election\.enable)=' \
  config/server.properties || true
