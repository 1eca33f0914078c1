"""Storage efficiency: the stand-in's computation on data of known make-up (4 KiB block
dedupe, zlib-1 over 8 KiB groups, the group of ONTAP's inline adaptive compression), its report through `volume show -fields` and
`storage aggregate show-efficiency`, and the TR's own EFF-2 arithmetic."""
import os

import pytest

from tr4947.lab.ontap import bootstrap, session, space, state
from tr4947.measure import efficiency

KiB = 1024


def test_random_data_saves_nothing(tmp_path):
    (tmp_path / "r").write_bytes(os.urandom(256 * KiB))
    m = space.measure(tmp_path, dedupe=True, compression=True)
    assert (m.logical, m.physical, m.dedupe_saved, m.compression_saved) == (256 * KiB, 256 * KiB, 0, 0)


def test_identical_copies_dedupe_to_one(tmp_path):
    data = os.urandom(128 * KiB)                     # incompressible, 32 distinct blocks
    for name in "abc":                               # three replicas of one segment
        (tmp_path / name).write_bytes(data)
    m = space.measure(tmp_path, dedupe=True, compression=False)
    assert m.logical == 3 * 128 * KiB
    assert m.physical == 128 * KiB and m.dedupe_saved == 2 * 128 * KiB
    assert m.ratio == pytest.approx(3.0)
    off = space.measure(tmp_path, dedupe=False, compression=False)
    assert off.physical == off.logical and off.ratio == 1.0


def test_half_random_payloads_do_not_compress_in_8_kib_groups(tmp_path):
    # OMB's randomized payloads with randomBytesRatio 0.5: each 1 KiB message is 512 random
    # bytes then 512 zero bytes. An 8 KiB group holds 4 KiB of random bytes, which zlib cannot
    # shrink, so the group compresses to just over 4 KiB and still needs two 4 KiB blocks:
    # nothing is saved. (In 32 KiB groups the same data would have saved 12 KiB per group.)
    msg = lambda: os.urandom(512) + bytes(512)       # noqa: E731
    (tmp_path / "seg").write_bytes(b"".join(msg() for _ in range(256)))
    m = space.measure(tmp_path, dedupe=True, compression=True)
    assert m.dedupe_saved == 0                       # no two 4 KiB blocks alike
    assert m.compression_saved == 0
    assert m.physical == m.logical == 256 * KiB and m.ratio == 1.0


def test_a_group_that_fits_one_block_is_stored_in_one(tmp_path):
    # A quarter random, the rest zeros: each 8 KiB group compresses to about 2 KiB and is
    # stored in one 4 KiB block, 2:1. In 32 KiB groups it would be 3 blocks per 8 (2.67:1),
    # so this pins the group size as well as the whole-block rule.
    msg = lambda: os.urandom(256) + bytes(768)       # noqa: E731
    (tmp_path / "seg").write_bytes(b"".join(msg() for _ in range(256)))
    m = space.measure(tmp_path, dedupe=True, compression=True)
    assert m.physical == 32 * 4 * KiB and m.compression_saved == 128 * KiB
    assert m.ratio == pytest.approx(2.0)


def test_a_lone_block_at_the_end_of_a_file_cannot_save_a_block(tmp_path):
    # 12 KiB: one random block, then two zero blocks. The first 8 KiB group (random + zeros)
    # compresses to just over 4 KiB and keeps its two blocks; the 4 KiB tail of zeros
    # compresses well but cannot take less than one block. Nothing is saved, where a single
    # 32 KiB group over the whole file would have saved one block.
    (tmp_path / "f").write_bytes(os.urandom(4 * KiB) + bytes(8 * KiB))
    m = space.measure(tmp_path, dedupe=False, compression=True)
    assert m.logical == m.physical == 12 * KiB and m.compression_saved == 0


def test_dedupe_happens_before_compression(tmp_path):
    zeros = bytes(64 * KiB)
    (tmp_path / "z").write_bytes(zeros)
    m = space.measure(tmp_path, dedupe=True, compression=True)
    # 16 identical zero blocks: 15 dedupe away, the one left compresses to one block
    assert m.dedupe_saved == 15 * 4 * KiB and m.compression_saved == 0
    assert m.physical == 4 * KiB


@pytest.fixture
def sh(tmp_path):
    bootstrap.bootstrap(tmp_path, "cluster1", ["cluster1-01"],
                        [{"name": "aggr1", "node": "cluster1-01", "size": "8TB"}], ["svm_kafka"],
                        [{"name": "lif1", "address": "127.0.10.11", "node": "cluster1-01",
                          "vserver": "svm_kafka"}])
    s = session.Session(tmp_path)
    s.root_path = tmp_path
    return s


def run(s, line):
    r = s.run_sync(line)
    assert not r.error, r.output
    return r.output


def test_volume_show_and_aggregate_report_the_measurement(sh):
    run(sh, "volume create -vserver svm_kafka -volume kafka_vol -aggregate aggr1 -size 10g "
            "-junction-path /kafka_vol")
    d = state.backing_dir(state.load(sh.root).volumes["svm_kafka:kafka_vol"], sh.root)
    seg = os.urandom(96 * KiB)
    for b in (1, 2, 3):                              # RF 3 on one volume
        (d / f"broker{b}").mkdir()
        (d / f"broker{b}" / "00000000000000000000.log").write_bytes(seg)
    fields = "used,logical-used,physical-used,sis-space-saved,sis-space-saved-percent"
    run(sh, 'set -showseparator "|"')
    off = efficiency.parse_fields_table(run(sh, f"volume show -volume kafka* -fields {fields}"))
    assert off[0]["physical-used"] == "288KB" and off[0]["sis-space-saved"] == "0B"
    run(sh, "volume efficiency on -vserver svm_kafka -volume kafka_vol")
    run(sh, "volume efficiency modify -vserver svm_kafka -volume kafka_vol "
            "-inline-compression true -inline-dedupe true")
    row = efficiency.parse_fields_table(run(sh, f"volume show -volume kafka* -fields {fields}"))[0]
    assert (row["logical-used"], row["physical-used"], row["sis-space-saved"],
            row["sis-space-saved-percent"]) == ("288KB", "96KB", "192KB", "66%")
    ag = efficiency.parse_aggregate_efficiency(
        run(sh, "storage aggregate show-efficiency -aggregate aggr1 -instance"))[0]
    assert ag.aggregate == "aggr1" and ag.ratio == pytest.approx(3.0)
    assert (ag.logical, ag.physical) == (288 * KiB, 96 * KiB)
    assert ag.computed_ratio == pytest.approx(ag.ratio, abs=0.01)


def test_fields_with_a_separator_keep_values_with_spaces_whole(sh):
    """The padded -fields layout cannot tell a value with spaces from the padding; after
    `set -showseparator "|"` every value is read whole (ONTAP quotes one with a space)."""
    run(sh, 'volume create -vserver svm_kafka -volume kafka_a -aggregate aggr1 -size 1g '
            '-junction-path /kafka_a -comment "logs of cluster 1"')
    run(sh, "volume create -vserver svm_kafka -volume kafka_b -aggregate aggr1 -size 1g")
    padded = run(sh, "volume show -volume kafka* -fields comment,size")
    assert "logs of cluster 1 1GB" in padded
    with pytest.raises(ValueError, match=r'set -showseparator "\|"'):
        efficiency.parse_fields_table(padded)
    run(sh, 'set -showseparator "|"')
    out = run(sh, "volume show -volume kafka* -fields comment,size")
    assert out.splitlines()[:3] == [
        "vserver|volume|comment|size|", "Vserver Name|Volume Name|Comment|Volume Size|",
        'svm_kafka|kafka_a|"logs of cluster 1"|1GB|']
    assert efficiency.parse_fields_table(out) == [
        {"vserver": "svm_kafka", "volume": "kafka_a", "comment": "logs of cluster 1",
         "size": "1GB"},
        {"vserver": "svm_kafka", "volume": "kafka_b", "comment": "", "size": "1GB"}]
    # The default layout comes back with the default separator.
    run(sh, 'set -showseparator " "')
    assert run(sh, "volume show -volume kafka* -fields size").splitlines()[1].startswith("---")


def test_parsers_reject_other_output():
    with pytest.raises(ValueError, match="no aggregate"):
        efficiency.parse_aggregate_efficiency("Aggregate: aggr1\nTotal Storage Efficiency Ratio: 1.00:1")
    with pytest.raises(ValueError, match="fields"):
        efficiency.parse_fields_table("There are no entries matching your query.")
    assert efficiency.size("420.3GB") == round(420.3 * 1024 ** 3)
    assert efficiency.ratio_of("1.70:1") == 1.70


def test_tr_eff2_figures_disagree_with_their_ratio():
    checks = {c.what: c for c in efficiency.check_tr_figures()}
    assert "= 1.49:1" in checks["ratio = logical / physical"].recomputed
    assert not checks["ratio = logical / physical"].agrees
    assert "41%" in checks["saving implied by the ratio"].recomputed
    assert checks["volume saving = saved / (used + saved)"].agrees      # the 33% is right


def test_naming_the_aggregate_shows_the_detailed_view(sh):
    # ONTAP's reference: with -aggregate, show-efficiency displays the aggregate's details,
    # which is the form the TR prints (EFF-2).
    out = run(sh, "storage aggregate show-efficiency -aggregate aggr1")
    assert "Name of the Aggregate: aggr1" in out and "Logical Space Used for All Volumes" in out
    assert "Name of the Aggregate" not in run(sh, "storage aggregate show-efficiency")


def test_holes_of_sparse_files_are_not_data(tmp_path):
    # Kafka preallocates each index file by setting its length (10 MiB): a hole, not data.
    data = os.urandom(8 * KiB)
    with open(tmp_path / "00000000000000000000.index", "wb") as f:
        f.write(data)
        f.truncate(10 * 1024 * KiB)
    st = os.stat(tmp_path / "00000000000000000000.index")
    if st.st_blocks * 512 >= st.st_size:
        pytest.skip("this file system does not keep holes")
    for dedupe, compression in ((True, True), (False, False)):
        m = space.measure(tmp_path, dedupe=dedupe, compression=compression)
        assert m.logical == 8 * KiB and m.physical == 8 * KiB and m.dedupe_saved == 0
    assert space.logical_bytes(tmp_path) == 8 * KiB
