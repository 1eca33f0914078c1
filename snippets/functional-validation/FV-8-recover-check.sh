# After the restart: nothing is under-replicated and no "-delete" directory is left.
: "${CLUSTER2:=198.18.2.1:9092,198.18.2.2:9092,198.18.2.3:9092,198.18.2.4:9092}"
: "${DATA_DIR:=/demo/broker_demo_1}"
urp=$(bin/kafka-topics.sh --bootstrap-server "$CLUSTER2" --describe --topic __a_demo_topic \
  --under-replicated-partitions)
echo "${urp:-no under-replicated partitions}"
ls -la "$DATA_DIR"/ | grep __a_demo_topic
