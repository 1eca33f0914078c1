"""The errata page: every entry has the four parts, and the evidence it quotes still holds.

Tool checks feed the TR's text as printed (tests/docs/tr_printed/) to the real tools and
require that the page quotes what they answer; recomputations are recalculated here and
must appear on the page as printed there.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import PAGES, REPO

ERRATA = PAGES / "errata.adoc"
PRINTED = Path(__file__).parent / "tr_printed"
EVIDENCE = ("Run", "Tool check", "Recomputation", "Reading")


def page() -> str:
    return ERRATA.read_text(encoding="utf-8")


def plain(text: str) -> str:
    """Page text with AsciiDoc's inline passthrough marks removed, whitespace collapsed."""
    return re.sub(r"\s+", " ", text.replace("`+", "`").replace("+`", "`"))


def tables(text: str) -> list[tuple[str, list[list[str]]]]:
    """(section title, rows of cells) for every table on the page; a row is any run of
    cells, so both one-cell-per-line and one-row-per-line tables are read."""
    out, section = [], ""
    parts = re.split(r"^\|===\s*$", text, flags=re.M)
    for i, chunk in enumerate(parts):
        if i % 2 == 0:
            titles = re.findall(r"^=+ (.+)$", chunk, flags=re.M)
            section = titles[-1] if titles else section
            cols = re.findall(r'cols="([^"]+)"', chunk)
            ncols = len(cols[-1].split(",")) if cols else 4
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", chunk)[1:]]
        rows = [cells[j:j + ncols] for j in range(0, len(cells), ncols)]
        out.append((section, rows))
    return out


def errata_rows() -> list[tuple[str, list[str]]]:
    return [(sec, row) for sec, rows in tables(page()) for row in rows[1:]]


def test_every_entry_has_where_text_fix_and_evidence():
    rows = errata_rows()
    assert len(rows) >= 30
    bad = [(sec, row[:1]) for sec, row in rows
           if len(row) != 4 or not all(row) or not row[3].startswith(EVIDENCE)]
    assert bad == [], f"entries without four parts or a known kind of evidence: {bad}"


def test_table_parser_sees_bad_entries():
    """Guards the guard: a three-cell row or an evidence cell of unknown kind is caught."""
    text = ('[cols="2,3,3,4"]\n|===\n|Where |TR |Guide |How\n\n|a\n|b\n|c\n|Guessed.\n\n'
            '|d\n|e\n|f\n|===\n')
    (sec, rows), = tables(text)
    assert rows[1][3] == "Guessed." and len(rows[2]) == 3


# --- tool checks: the real tools still answer what the page quotes ----------------------

def kafka_cp() -> str:
    from tr4947 import paths
    try:
        return str(paths.kafka_libs() / "*")
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


def run(cmd, **kw) -> str:
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=180, **kw)
    return res.stdout + res.stderr


def test_reassign_command_as_printed_is_rejected_by_kafka():
    out = run(["java", "-cp", kafka_cp(), "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
               "--bootstrap", "-server=127.0.0.1:1", "--broker-list", "1,2,3,4",
               "--topics-to-move-json-file", "/dev/null", "--generate"])
    quoted = "bootstrap is not a recognized option"
    assert quoted in out and quoted in page()


def test_single_hyphen_execute_is_accepted(tmp_path):
    empty = tmp_path / "reassignment.json"
    empty.write_text('{"version":1,"partitions":[]}')
    out = run(["java", "-cp", kafka_cp(), "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
               "--bootstrap-server=127.0.0.1:1", "--reassignment-json-file", str(empty), "-execute"])
    assert "not a recognized option" not in out and "cannot be empty" in out


def test_bootstrap_list_split_by_a_space_is_rejected():
    out = run(["java", "-cp", kafka_cp(), "org.apache.kafka.tools.ProducerPerformance",
               "--topic", "__a_demo_topic", "--throughput", "-1", "--num-records", "3000000",
               "--record-size", "1024", "--producer-props", "acks=all",
               "bootstrap.servers=172.30.0.160:9092,172.30.0.172:9092,172.30.0.188:9092,",
               "172.30.0.123:9092"])
    quoted = "IllegalArgumentException: Invalid property: 172.30.0.123:9092"
    assert quoted in out and quoted in page()


def test_broker_keys_and_duplicate_values():
    printed = PRINTED / "cpu1-broker.as-printed.properties"
    keys = [l.split("=")[0] for l in printed.read_text().splitlines() if "=" in l]
    defaults = {"num.io.threads": "8", "num.network.threads": "3", "background.threads": "10",
                "num.replica.fetchers": "1", "queued.max.requests": "500",
                "log.segment.delete.delay.ms": "60000"}
    out = run(["java", "-cp", kafka_cp(), str(PRINTED / "KafkaKeys.java"), str(printed),
               "replica.lag.time.mx.ms", "node.id", *keys, *defaults])
    unknown = set(re.findall(r"^unknown (\S+)$", out, re.M))
    # the TR's broker file: every key known except the one ZooKeeper mode took away
    assert unknown == {"zookeeper.connect", "replica.lag.time.mx.ms"}, out
    for key, value in defaults.items():
        assert f"known {key} default={value}" in out, out
    for line in ("known replica.lag.time.max.ms", "known node.id",
                 "effective num.replica.fetchers=1", "effective replica.fetch.max.bytes=1048576"):
        assert line in out, out
    assert "num.replica.fetchers=1 replica.fetch.max.bytes=1048576" in page()
    assert "(8, 3, 10, 1, 500)" in page()


def test_printed_driver_file_is_not_yaml():
    import yaml
    with pytest.raises(yaml.YAMLError) as exc:
        yaml.safe_load((PRINTED / "cvo6-kafka-sync.as-printed.yaml").read_text())
    assert "could not find expected ':'" in str(exc.value)
    assert "could not find expected ':'" in page()


@pytest.mark.parametrize("option", ["-drivers", "\u2013drivers"])
def test_omb_runner_rejects_the_printed_option(option):
    # The runner's command line, as the lab's bin/benchmark runs it.
    out = run([sys.executable, "-m", "tr4947.omb", option,
               "driver-kafka/kafka-sync.yaml", "workloads/1-topic-100-partitions-1kb.yaml"])
    assert f"unknown option '{option}': did you mean --drivers?" in out
    assert "unknown option '-drivers': did you mean --drivers?" in page()


@pytest.fixture
def ontap(tmp_path):
    from tr4947.lab.ontap import bootstrap, session
    bootstrap.bootstrap(tmp_path, "cluster1", ["cluster1-01", "cluster1-02"],
                        [{"name": "aggr1", "node": "cluster1-01", "size": "8TB"}],
                        ["vs1", "svmkafkatest"], [])
    s = session.Session(tmp_path)
    s.run_sync("set -privilege advanced")
    return s


def test_vserver_modify_with_nfs_options_is_rejected(ontap):
    r = ontap.run_sync("vserver modify -vserver vs1 -v4.1-pnfs enabled -tcp-max-xfer-size 262144")
    assert r.error and 'Error: invalid argument "-v4.1-pnfs"' in r.output
    assert not ontap.run_sync(
        "vserver nfs modify -vserver vs1 -v4.1-pnfs enabled -tcp-max-xfer-size 262144").error
    assert 'invalid argument "-v4.1-pnfs"' in page()


def test_volume_mount_after_create_with_junction_path(ontap):
    assert not ontap.run_sync(
        "volume create -vserver svmkafkatest -volume kafkafsxN1 -state online -policy default "
        "-unix-permissions ---rwxr-xr-x -junction-active true -type RW -snapshot-policy none "
        "-junction-path /kafkafsxN1 -aggr-list aggr1").error
    r = ontap.run_sync("volume mount -vserver svmkafkatest -volume kafkafsxN1 -junction-path /kafkafsxN1")
    quoted = 'Volume "kafkafsxN1" in Vserver "svmkafkatest" is already mounted at "/kafkafsxN1".'
    assert r.error and quoted in r.output and quoted in page()


def test_printed_playbook_fails_in_ansible(tmp_path):
    exe = Path(sys.executable).with_name("ansible-playbook")
    if not exe.exists():
        exe = shutil.which("ansible-playbook")
        if not exe:
            pytest.skip("ansible-playbook not installed")
    book = tmp_path / "aff1.yml"
    # gather_facts off so that nothing but the printed task is attempted
    book.write_text((PRINTED / "aff1-playbook.as-printed.yml").read_text()
                    .replace("  hosts: localhost\n", "  hosts: localhost\n  gather_facts: false\n", 1))
    out = run([str(exe), "-i", "localhost,", "-c", "local", str(book)],
              env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
                   "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
                   "ANSIBLE_LOCALHOST_WARNING": "False", "HOME": str(tmp_path)})
    quoted = "Error while resolving value for 'aggr_list': 'item' is undefined"
    assert quoted in out, out[-2000:]
    assert quoted in page()


# --- recomputations: the page prints what the arithmetic gives --------------------------

def seconds(hms: str) -> float:
    h, m, s = hms.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


RECOMPUTED = [
    (f"{seconds('09:05:24.860') - seconds('08:55:53.730'):.1f} s", "DAS recovery"),
    (f"{seconds('09:42:29.115') - seconds('09:39:17.213'):.1f} s", "NFS recovery"),
    (f"= {(seconds('09:05:24.860') - seconds('08:55:53.730')) / (seconds('09:42:29.115') - seconds('09:39:17.213')):.2f}", "recovery ratio"),
    (f"48 / 3 = {48 / 3:.0f}", "1 TB ratio"),
    (f"{48 / 5:.1f} with the 5-minute bound", "1 TB ratio with the bound"),
    (f"420.3 / 281.7 = {420.3 / 281.7:.2f}", "efficiency quotient"),
    (f"(281 + 138) / 281 = {(281 + 138) / 281:.2f}", "volume ratio"),
    (f"138 / 419 = {138 / 419:.0%}", "volume savings"),
    (f"1 - 1 / 1.70 = {1 - 1 / 1.70:.0%}", "savings implied by 1.70:1"),
    (f"5 / 31 = {5 / 31:.0%}", "CPU savings, low rate"),
    (f"32 / 70 = {32 / 70:.0%}", "CPU savings, high rate"),
    (f"39 / 31 = {39 / 31:.0%}", "DAS CPU rise"),
    (f"12 / 26 = {12 / 26:.0%}", "NFS CPU rise"),
    (f"= {257759.2 * 16384 / 2**20:.1f}: OMB's", "OMB MiB"),
    (f"{257759.2 * 16384 / 1e9:.3f} x 10^9^", "OMB bytes per second"),
    (f"= {1328 / 2 * 3 + 1328 / 2:.0f} MBps", "FSx RF 3 storage traffic, 4096 MBps"),
    (f"= {881 / 2 * 3 + 881 / 2:.0f} MBps", "FSx RF 3 storage traffic, 2048 MBps"),
    (f"3.4 x 3 / 2 = {3.4 * 3 / 2:.1f}", "sizing RF 2"),
    (f"3.4 x 3 / 1 = {3.4 * 3:.1f}", "sizing RF 1"),
]


@pytest.mark.parametrize("text,what", RECOMPUTED, ids=[w for _, w in RECOMPUTED])
def test_recomputed_figure_is_on_the_page(text, what):
    assert text in plain(page()), f"{what}: expected {text!r} on the errata page"
