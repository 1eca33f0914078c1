# Lab experiment, run on broker 1's host before the second reassignment: a reader keeps the
# topic's segment files open (as any agent tailing, copying or scanning the log dir would),
# so the files Kafka deletes are still open on this NFS client.
: "${DATA_DIR:=/demo/broker_demo_1}"
tail -q -n 0 -f "$DATA_DIR"/__a_demo_topic-*/*.log > /dev/null 2> /tmp/segment-reader.log &
echo $! > /tmp/segment-reader.pid
sleep 1
echo "reader pid $(cat /tmp/segment-reader.pid) holds open:"
ls "$DATA_DIR"/__a_demo_topic-*/*.log
