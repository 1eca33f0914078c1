: "${CLUSTER1:=198.18.1.1:9092,198.18.1.2:9092,198.18.1.3:9092,198.18.1.4:9092}"
: "${CLUSTER2:=198.18.2.1:9092,198.18.2.2:9092,198.18.2.3:9092,198.18.2.4:9092}"
echo "== cluster 1"
bin/kafka-topics.sh --bootstrap-server="$CLUSTER1" --describe --topic __a_demo_topic
echo "== cluster 2"
bin/kafka-topics.sh --bootstrap-server="$CLUSTER2" --describe --topic __a_demo_topic
