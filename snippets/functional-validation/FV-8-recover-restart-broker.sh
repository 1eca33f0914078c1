# Start the broker again with its own configuration: at start-up Kafka finds the leftover
# "-delete" directory and deletes it, then the broker rejoins and catches up.
bin/kafka-server-start.sh -daemon config/server.properties
