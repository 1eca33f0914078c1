# On the OMB client, in OMB's installation directory: CVO-6-workload.yaml saved as the workload,
# CVO-6-driver-throughput.yaml as the driver.
cd /opt/benchmark
bin/benchmark --drivers driver-kafka/kafka-throughput.yaml workloads/1-topic-100-partitions-1kb.yaml
