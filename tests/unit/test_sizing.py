import pytest

from tr4947 import sizing


def test_tr_table_follows_from_the_measured_rf3_figure():
    # TR-4947: RF 3 measured 3.4 GBps -> RF 2 5.1, RF 1 10.2
    assert sizing.table(3.4, 3) == [(3, 3.4), (2, 5.1), (1, 10.2)]


def test_per_broker_storage_and_ceiling_are_inverse():
    per_broker = sizing.storage_per_broker(t_cluster=3.4, brokers=4, r=3)
    assert per_broker == pytest.approx(2.55)
    assert sizing.max_cluster_throughput(per_broker * 4, 3) == pytest.approx(3.4)


@pytest.mark.parametrize("brokers,r", [(0, 1), (3, 0), (2, 3)])
def test_impossible_layouts_are_refused(brokers, r):
    with pytest.raises(ValueError):
        sizing.storage_per_broker(1.0, brokers, r)


def test_plan_applies_the_formula_both_ways():
    p = sizing.Plan(t_cluster=3.4, brokers=8, r=3, storage_aggregate=10.2)
    assert p.per_broker == pytest.approx(1.275)
    assert p.total_writes == pytest.approx(10.2)
    assert p.ceiling == pytest.approx(3.4) and p.fits and p.utilisation == pytest.approx(1.0)
    over = sizing.Plan(t_cluster=4.0, brokers=8, r=3, storage_aggregate=10.2)
    assert over.fits is False and over.utilisation > 1
    assert sizing.Plan(1.0, 3, 3).ceiling is None


def test_dd_summary_parsed_and_concurrent_rate_is_conservative():
    from tr4947.measure import storage_write as sw
    w = sw.parse_dd("256+0 records in\n256+0 records out\n"
                    "268435456 bytes (268 MB, 256 MiB) copied, 2.5 s, 107 MB/s\n")
    assert (w.bytes, w.seconds) == (268435456, 2.5) and w.mb_per_s == pytest.approx(107.374, abs=1e-3)
    slow = sw.Write(100_000_000, 4.0)
    assert sw.concurrent_rate([sw.Write(100_000_000, 2.0), slow]) == pytest.approx(50.0)
    with pytest.raises(ValueError, match="no dd summary"):
        sw.parse_dd("dd: error writing '/mnt/data/x': No space left on device\n")


@pytest.mark.parametrize("call,msg", [
    (lambda: sizing.storage_per_broker(-1.0, 3, 3), r"t_cluster: -1.0 is not allowed \(must be >= 0"),
    (lambda: sizing.storage_per_broker(1.0, 2.5, 1), r"brokers: 2.5 is not allowed \(must be a whole number"),
    (lambda: sizing.max_cluster_throughput(float("nan"), 3), r"storage_aggregate: nan is not allowed"),
    (lambda: sizing.Plan(1.0, 3, 4), r"r: replication factor 4 is not allowed with 3 brokers"),
])
def test_bad_arguments_are_named_with_what_is_allowed(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()


def test_zero_throughput_and_whole_float_counts_are_fine():
    # sizing.ipynb builds Plan(0, brokers, r, measured) to read only the ceiling.
    assert sizing.Plan(0, 3, 3, 300.0).ceiling == pytest.approx(100.0)
    assert sizing.storage_per_broker(3.0, 3.0, 3.0) == pytest.approx(3.0)
