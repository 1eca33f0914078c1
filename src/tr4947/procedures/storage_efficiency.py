"""EFF-1, EFF-2: data written with producer compression off, and what ONTAP saves on it.

The brokers of one cluster share one volume (as the TR's did); its inline compression and
deduplication are switched on (EFF-1), OMB writes with the driver that switches producer
compression off, and ONTAP reports the aggregate's efficiency and the volume's logical and
physical space (EFF-2). To measure more than once, the test topic is deleted (and its files
with it) and the data written again.
"""
from __future__ import annotations

from ..wait import until
from .. import paths
from ..measure import efficiency
from . import omb

SNIP = "storage-efficiency/"
WORKLOAD_FILE = "workloads/1-topic-100-partitions-1kb-random.yaml"
DRIVER_FILE = "driver-kafka/kafka-no-compression.yaml"


def files(t, cluster: str) -> dict[str, str]:
    driver = (paths.SNIPPETS / SNIP / "EFF-1-driver-no-compression.yaml").read_text()
    return {WORKLOAD_FILE: (paths.SNIPPETS / SNIP / "EFF-1-workload.yaml").read_text(),
            DRIVER_FILE: omb.with_bootstrap(driver, t.bootstrap(cluster))}


def produce(t, client: str, cluster: str, scale: dict, name: str) -> omb.Run:
    return omb.run(t, client, name, SNIP + "EFF-1-benchmark.sh", files(t, cluster), scale,
                   timeout=4 * 3600)


def read_savings(t, rb, ontap: str, volume: str, record: bool, needs=None) -> dict | None:
    """EFF-2 as ONTAP reports it (read-only): the aggregate's ratio and the volume's space."""
    agg_out = t.run_snippet(SNIP + "EFF-2-aggr-efficiency.ontap", ontap, read_only=True,
                            check=True, needs=needs)
    vol_out = t.run_snippet(SNIP + "EFF-2-volume-space.ontap", ontap, read_only=True,
                            check=True, needs=needs)
    if record:
        rb.show("EFF-2", "storage aggregate show-efficiency", agg_out, prompt="::>")
        rb.show("EFF-2", "Logical and physical space of the Kafka volume", vol_out, prompt="::>")
    if agg_out.planned:
        return None
    agg = efficiency.parse_aggregate_efficiency(agg_out.output)[0]
    vol = next(v for v in efficiency.parse_fields_table(vol_out.output) if v["volume"] == volume)
    return {"aggregate": agg, "volume": vol,
            "logical": efficiency.size(vol["logical-used"]),
            "physical": efficiency.size(vol["physical-used"]),
            "dedupe": efficiency.size(vol["dedupe-space-saved"]),
            "compression": efficiency.size(vol["compression-space-saved"])}


def clear(t, client: str, cluster: str, data_dirs: dict[str, str]) -> None:
    """Delete the run's topic and wait until every broker has removed its files."""
    omb.delete_test_topics(t, client, t.bootstrap(cluster))
    for host, d in data_dirs.items():
        until(lambda host=host, d=d: not t.run(
            f"ls -d {d}/test-topic-* 2>/dev/null || true", host, read_only=True).stdout.strip(),
            180, 1, f"{host} to delete the test topic's files")
