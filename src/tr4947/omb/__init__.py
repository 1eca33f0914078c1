"""OpenMessaging Benchmark (OMB) runner for the lab.

Reads OMB workload and Kafka driver YAML files unchanged, drives the real Kafka client
(librdkafka via confluent-kafka), logs OMB's periodic lines and writes OMB's result JSON.

    from tr4947.omb import run
    res = run("workloads/1-topic-100-partitions-1kb.yaml", "driver-kafka/kafka-throughput.yaml",
              bootstrap="127.0.1.1:9092", duration_s=60, rate=0.1)
    res["publishRate"], res.samples, res.path

Command line: ``python -m tr4947.omb --help`` or the ``bin/benchmark`` shim.
"""
from .driver import DriverConfig, parse_driver
from .result import Result
from .runner import LabScale, run
from .workload import ConfigError, Workload, parse_workload

__all__ = ["run", "Result", "LabScale", "Workload", "DriverConfig", "ConfigError",
           "parse_workload", "parse_driver"]
