# Start and end of the recovery in the replacement broker's log.
grep -E "Transition from SHUTDOWN to STARTING|Kafka Server started|Removed fetcher for partitions|Finished loading" \
  logs/server.log | cut -c1-200
