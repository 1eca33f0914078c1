# Propose a new assignment of __a_demo_topic over brokers 1-4 and save it.
# BOOTSTRAP picks the cluster: cluster 1 by default, 198.18.2.1-4:9092 for cluster 2.
: "${BOOTSTRAP:=198.18.1.1:9092,198.18.1.2:9092,198.18.1.3:9092,198.18.1.4:9092}"
bin/kafka-reassign-partitions.sh --bootstrap-server="$BOOTSTRAP" \
  --broker-list "1,2,3,4" --topics-to-move-json-file /tmp/topics.json --generate \
  | tee /tmp/reassignment-proposal.txt
# The tool prints the current and the proposed assignment; keep the proposed one.
awk 'found { print; exit } /^Proposed partition reassignment configuration/ { found = 1 }' \
  /tmp/reassignment-proposal.txt > /tmp/reassignment-file.json
