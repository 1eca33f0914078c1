# On the OMB client, in OMB's installation directory, with the two files above saved there.
cd /opt/benchmark
bin/benchmark --drivers driver-kafka/kafka-no-compression.yaml workloads/1-topic-100-partitions-1kb-random.yaml
