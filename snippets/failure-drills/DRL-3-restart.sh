# On the NFS broker, once the volume has room again: Kafka starts and recovers its logs.
bin/kafka-server-start.sh -daemon config/server.properties
