: "${CLUSTER1:=127.0.1.1:9092,127.0.1.2:9092,127.0.1.3:9092,127.0.1.4:9092}"
: "${CLUSTER2:=127.0.2.1:9092,127.0.2.2:9092,127.0.2.3:9092,127.0.2.4:9092}"
echo "== cluster 1"
bin/kafka-topics.sh --bootstrap-server="$CLUSTER1" --describe --topic __a_demo_topic
echo "== cluster 2"
bin/kafka-topics.sh --bootstrap-server="$CLUSTER2" --describe --topic __a_demo_topic
