"""The clustershell stand-in accepts the TR's ONTAP commands and rejects what ONTAP rejects."""
from __future__ import annotations

import pytest

from tr4947 import units
from tr4947.lab.ontap import bootstrap, session, state

FV1 = ("volume create -vserver svm_kafka -volume kafka_fg_vol01 -aggregate aggr1 -size 3500GB "
       "-state online -policy kafka_policy -security-style unix -unix-permissions 0777 "
       "-junction-path /kafka_fg_vol01 -type RW -is-preserve-unlink-enabled true")


@pytest.fixture
def sh(tmp_path):
    bootstrap.bootstrap(tmp_path, "cluster1", ["cluster1-01", "cluster1-02"],
                        [{"name": "aggr1", "node": "cluster1-01", "size": "8TB"},
                         {"name": "aggr2", "node": "cluster1-02", "size": "8TB"}],
                        ["svm_kafka"],
                        [{"name": "lif_kafka_1", "address": "127.0.10.11", "node": "cluster1-01",
                          "vserver": "svm_kafka"}])
    s = session.Session(tmp_path)
    s.root_path = tmp_path
    return s


def ok(s, line):
    r = s.run_sync(line)
    assert not r.error, f"{line!r} failed:\n{r.output}"
    return r.output


def err(s, line):
    r = s.run_sync(line)
    assert r.error, f"{line!r} should fail but printed:\n{r.output}"
    assert r.output.startswith("Error: ") or "\nError: " in r.output
    return r.output


def test_prompt_and_privilege(sh):
    assert sh.prompt == "cluster1::> "
    out = ok(sh, "set -privilege advanced")
    assert "Do you want to continue? {y|n}:" in out and "potentially dangerous" in out
    assert sh.prompt == "cluster1::*> "
    ok(sh, "set admin")
    assert sh.prompt == "cluster1::> "
    r = sh.run_sync("set advanced", answer="n")
    assert sh.prompt == "cluster1::> " and not r.error
    out = ok(sh, "set -privilege advanced -confirmations off")
    assert "{y|n}" not in out and sh.prompt == "cluster1::*> "
    ok(sh, "set -priv diag")
    assert sh.privilege == "diagnostic"


def test_fv1_needs_advanced_privilege(sh):
    assert err(sh, FV1.replace("kafka_policy", "default")) == \
        'Error: invalid argument "-is-preserve-unlink-enabled"'
    assert not state.load(sh.root).volumes.get("svm_kafka:kafka_fg_vol01")


def test_fv1_as_in_the_tr(sh):
    ok(sh, "set -privilege advanced -confirmations off")
    # the TR's export policy must exist first, as on a real SVM
    assert "kafka_policy" in err(sh, FV1)
    ok(sh, "vserver export-policy create -vserver svm_kafka -policyname kafka_policy")
    out = ok(sh, FV1)
    assert out.startswith("[Job ") and out.endswith("] Job succeeded: Successful")
    vol = state.load(sh.root).volumes["svm_kafka:kafka_fg_vol01"]
    assert vol.is_preserve_unlink_enabled and vol.junction_path == "/kafka_fg_vol01"
    assert vol.size == 3500 * 1024 ** 3
    assert state.backing_dir(vol, sh.root).is_dir()
    out = ok(sh, "volume show -vserver svm_kafka -volume kafka* -fields is-preserve-unlink-enabled")
    assert out.splitlines()[0].split() == ["vserver", "volume", "is-preserve-unlink-enabled"]
    assert out.splitlines()[2].split() == ["svm_kafka", "kafka_fg_vol01", "true"]
    assert "entries were displayed" not in out
    # duplicate
    assert "Duplicate volume name" in err(sh, FV1)


def test_volume_modify_preserve_unlink(sh):
    ok(sh, "volume create -vserver svm_kafka -volume v1 -aggregate aggr1 -size 100g "
           "-junction-path /v1")
    assert err(sh, "volume modify -vserver svm_kafka -volume v1 -is-preserve-unlink-enabled true") \
        == 'Error: invalid argument "-is-preserve-unlink-enabled"'
    ok(sh, "set advanced")
    out = ok(sh, "volume modify -vserver svm_kafka -volume v1 -is-preserve-unlink-enabled true")
    assert out == "Volume modify successful on volume v1 of Vserver svm_kafka."
    assert state.load(sh.root).volumes["svm_kafka:v1"].is_preserve_unlink_enabled
    ok(sh, "set admin")
    assert "is-preserve-unlink-enabled" in err(sh, "volume show -fields is-preserve-unlink-enabled")


@pytest.mark.parametrize("line", [
    "volume create -vserver svm_kafka -volume x -aggregate aggr1 -sise 1g",
    "volume create -vserver svm_kafka -volume x -aggregate aggr1 -is-preserve-unlink true",
    "volume create -vserver svm_kafka -volume x -aggregate aggr1 -size 1g -junction_path /x",
    "volume show -vserverr svm_kafka",
])
def test_misspelled_parameters(sh, line):
    assert "invalid argument" in err(sh, line)


@pytest.mark.parametrize("size", ["10XB", "abc", "1.2.3g", "-5g", "GB"])
def test_bad_sizes(sh, size):
    assert f'"{size}" is an invalid value for field "-size' in err(
        sh, f"volume create -vserver svm_kafka -volume x -aggregate aggr1 -size {size}")


def test_sizes_and_volume_size(sh):
    ok(sh, "volume create -vserver svm_kafka -volume s -aggregate aggr1 -size 500g")
    assert state.load(sh.root).volumes["svm_kafka:s"].size == 500 * 1024 ** 3
    assert ok(sh, "volume size -vserver svm_kafka -volume s -new-size 1TB") == \
        'vol size: Volume "svm_kafka:s" size set to 1t.'
    assert ok(sh, "volume size svm_kafka s +1g").endswith("size set to 1.00t.")
    assert units.format_size(int(2.1 * 1024 ** 4)) == "2.10TB"
    assert units.format_size(1023 * 1024 ** 2) == "1023MB"
    assert units.format_size(1024 ** 3) == "1GB"
    assert "too small" in err(sh, "volume size -vserver svm_kafka -volume s -new-size 1m")


def test_fsx_flow_defaults_vserver_and_flexgroup(sh):
    ok(sh, "set advanced")
    out = ok(sh, "volume create -volume kafkafsxN1 -state online -policy default "
                 "-unix-permissions ---rwxr-xr-x -junction-active true -type RW "
                 "-snapshot-policy none  -junction-path /kafkafsxN1 -aggr-list aggr1")
    assert "Job succeeded" in out
    vol = state.load(sh.root).volumes["svm_kafka:kafkafsxN1"]
    # No -size: ONTAP's 20MB default per constituent, 4 constituents (the default multiplier)
    assert vol.style == "flexgroup" and vol.aggr_list_multiplier == 4
    assert vol.size == 4 * 20 * 1024 ** 2
    grown = vol.size + 2 * 1024 ** 4
    assert ok(sh, "volume size -volume kafkafsxN1 -new-size +2TB") == \
        f'vol size: Volume "svm_kafka:kafkafsxN1" size set to {units.format_size(grown, True)}.'
    assert state.load(sh.root).volumes["svm_kafka:kafkafsxN1"].size == grown
    table = ok(sh, "volume show -vserver svm_kafka -volume *")
    row = next(l for l in table.splitlines() if "kafkafsxN1" in l).split()
    row = row[row.index("kafkafsxN1") + 1:]
    assert row[:5] == ["-", "online", "RW", units.format_size(grown),
                       units.format_size(int(grown * 0.95))]
    # The TR then runs `volume mount` on a volume it already junctioned at create time
    assert "already mounted" in err(sh, "volume mount -volume kafkafsxN1 -junction-path /kafkafsxN1")
    ok(sh, "volume unmount -volume kafkafsxN1")
    ok(sh, "volume mount -volume kafkafsxN1 -junction-path /kafkafsxN1")


def test_flexgroup_aggr_list_multiplier(sh):
    ok(sh, "volume create -vserver svm_kafka -volume kafka_fg -aggr-list aggr1,aggr2 "
           "-aggr-list-multiplier 8 -size 10TB -junction-path /kafka_fg")
    out = ok(sh, "volume show -volume kafka_fg -fields aggr-list,constituent-count,volume-style-extended")
    assert "aggr1,aggr2" in out and " 16 " in out and "flexgroup" in out
    assert "does not exist" in err(sh, "volume create -vserver svm_kafka -volume y -aggregate nope")
    assert "does not exist" in err(sh, "volume create -vserver vs9 -volume y -aggregate aggr1")


def test_abbreviations_and_unknown_commands(sh):
    assert "Vserver   Volume" in ok(sh, "vol show")
    assert ok(sh, "vol sho -vs svm_kafka -fields size").startswith("vserver")
    assert err(sh, "volume crete") == 'Error: "crete" is not a recognized command'
    assert err(sh, "xyz") == 'Error: "xyz" is not a recognized command'
    assert "Ambiguous" in err(sh, "vol s")
    # statistics start is advanced privilege
    assert "is not a recognized command" in err(sh, "statistics start -object vnvram")
    assert "-is-preserve-unlink-enabled" not in ok(sh, "volume create ?")
    ok(sh, "set adv")
    assert "-is-preserve-unlink-enabled" in ok(sh, "volume create ?")


def test_missing_required(sh):
    assert "-volume" in err(sh, "volume create -vserver svm_kafka -aggregate aggr1")
    assert "Missing" in err(sh, "vserver nfs modify -v3 enabled")


def test_vserver_modify_rejects_pnfs_errata(sh):
    # TR AFF-2 as written: -v4.1-pnfs is a `vserver nfs modify` parameter
    assert err(sh, "vserver modify -vserver vs1 -v4.1-pnfs enabled -tcp-max-xfer-size 262144") \
        == 'Error: invalid argument "-v4.1-pnfs"'
    # -tcp-max-xfer-size needs advanced privilege
    assert "-tcp-max-xfer-size" in err(
        sh, "vserver nfs modify -vserver svm_kafka -v4.1-pnfs enabled -tcp-max-xfer-size 262144")
    ok(sh, "set -privilege advanced -confirmations off")
    ok(sh, "vserver nfs modify -vserver svm_kafka -v4.1-pnfs enabled -tcp-max-xfer-size 262144")
    vs = state.load(sh.root).vservers["svm_kafka"]
    assert vs.nfs_v41_pnfs and vs.tcp_max_xfer_size == 262144
    out = ok(sh, "vserver nfs show -vserver svm_kafka -fields v4.1-pnfs,tcp-max-xfer-size")
    assert out.splitlines()[2].split() == ["svm_kafka", "enabled", "262144"]
    assert "invalid value" in err(sh, "vserver nfs modify -vserver svm_kafka -v4.1 maybe")


def test_show_commands(sh):
    assert "lif_kafka_1" in ok(sh, "network interface show")
    assert "svm_kafka" in ok(sh, "vserver show")
    assert "aggr1" in ok(sh, "storage aggregate show")
    assert "Total Storage Efficiency Ratio" in ok(sh, "storage aggregate show-efficiency")
    assert ok(sh, "version").startswith("NetApp Release 9.12.1")
    assert ok(sh, "network connections active show -service nfs*") == \
        "There are no entries matching your query."
    out = ok(sh, "volume show -instance -volume svm_kafka_root")
    assert "Volume Name: svm_kafka_root" in out


def test_efficiency_measures_written_data(sh):
    ok(sh, "volume create -vserver svm_kafka -volume e -aggregate aggr1 -size 1g -junction-path /e")
    assert ok(sh, "volume efficiency on -vserver svm_kafka -volume e") == \
        'Efficiency for volume "e" of Vserver "svm_kafka" is enabled.'
    ok(sh, "volume efficiency modify -vserver svm_kafka -volume e -inline-compression true "
           "-inline-dedupe true")
    d = state.backing_dir(state.load(sh.root).volumes["svm_kafka:e"], sh.root)
    block = bytes(range(256)) * 16 * 64              # 256 KiB, compressible
    (d / "a").write_bytes(block)
    (d / "b").write_bytes(block)                     # a replica: deduplicates fully
    out = ok(sh, "storage aggregate show-efficiency -aggregate aggr1 -instance")
    ratio = float(out.split("Total Storage Efficiency Ratio: ")[1].split(":")[0])
    assert ratio > 2.0
    assert "Logical Space Used for All Volumes: 512KB" in out
    vol = state.load(sh.root).volumes["svm_kafka:e"]
    assert vol.logical_used == 512 * 1024 and vol.physical_used < 256 * 1024


def test_statistics(sh):
    ok(sh, "set advanced")
    assert ok(sh, "statistics start -object vnvram -instance vnvram -counter backing_store_iops "
                  "-sample-id sample_555") == \
        "Statistics collection is being started for sample-id: sample_555"
    out = ok(sh, "statistics show -sample-id sample_555")
    assert "Object: vnvram" in out and "backing_store_iops" in out
    ok(sh, "statistics stop -sample-id sample_555")


def test_semicolon_separated_and_stop_at_error(sh):
    r = sh.run_sync("set adv -c off; volume show -fields is-preserve-unlink-enabled; bogus; version")
    assert r.error and "bogus" in r.output and "NetApp Release" not in r.output
