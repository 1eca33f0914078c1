# On the OMB client, in OMB's installation directory, with CPU-2-workload.yaml saved as the
# workload file and CPU-2-driver-group-all.yaml as the driver.
cd /opt/benchmark
bin/benchmark --drivers driver-kafka/kafka-group-all.yaml workloads/1-topic-100-partitions-1kb.yaml
