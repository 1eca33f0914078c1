# Stop the process that holds the files (here: the lab's segment reader). The client removes
# each hidden file at its last close; the empty "-delete" directory stays until Kafka retries.
: "${DATA_DIR:=/demo/broker_demo_1}"
kill "$(cat /tmp/segment-reader.pid)" && sleep 2
ls -la "$DATA_DIR"/ | grep -- '-delete'
ls -la "$DATA_DIR"/*-delete
