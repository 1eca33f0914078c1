"""Class-data sharing archives for the lab's Kafka JVMs (tr4947.lab.cds): built by a real run,
mapped by the wrappers the lab installs, and harmless when absent."""
from __future__ import annotations

import re
import subprocess

import pytest

from tr4947 import paths
from tr4947.lab import cds, kafka


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Archives of the lab's Kafka, built from scratch into a directory of this test's."""
    try:
        paths.kafka_libs()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    where = tmp_path_factory.mktemp("cds")
    mp = pytest.MonkeyPatch()
    mp.setattr(cds, "directory", lambda version=None: where)
    said = []
    try:
        got = cds.ensure(say=said.append)
    finally:
        mp.undo()
    return got, said


def shared_classes(jvm_flags: list[str], main: str, args: list[str]) -> tuple[int, int, str]:
    """(classes mapped from the dynamic archive, classes read from jars, stdout)."""
    r = subprocess.run([kafka.java(), *jvm_flags, "-Xlog:class+load=info", "-cp",
                        f"{paths.kafka_libs()}/*", main, *args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-1000:]
    top = len(re.findall(r"source: shared objects file \(top\)", r.stdout))
    jars = len(re.findall(r"source: file:", r.stdout))
    return top, jars, r.stdout


def test_a_build_makes_both_archives_and_says_so(built):
    got, said = built
    assert set(got) == {"tools", "server"}
    assert any("class-data sharing archives" in s for s in said), said


def test_a_tool_maps_most_of_its_classes_from_the_archive(built):
    got, _ = built
    tool = kafka.tools(paths.kafka_version())["kafka-storage"]
    top, jars, _ = shared_classes(["-Xshare:on", f"-XX:SharedArchiveFile={got['tools']}"],
                                  tool, ["random-uuid"])
    without_top, without_jars, _ = shared_classes([], tool, ["random-uuid"])
    assert without_top == 0
    assert top > 500 and jars < without_jars / 2, (top, jars, without_jars)


def test_a_missing_or_foreign_archive_changes_nothing(built, tmp_path):
    """The wrappers always name the archive: a JVM must run the same without a usable one."""
    tool = kafka.tools(paths.kafka_version())["kafka-storage"]
    junk = tmp_path / "junk.jsa"
    junk.write_bytes(b"not an archive" * 100)
    for archive in (tmp_path / "missing.jsa", junk):
        r = subprocess.run([kafka.java(), f"-XX:SharedArchiveFile={archive}", "-cp",
                            f"{paths.kafka_libs()}/*", tool, "random-uuid"],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and r.stderr == ""
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}\n", r.stdout), r.stdout


def test_installed_wrappers_map_the_archives_they_are_given(tmp_path):
    arch = {"tools": tmp_path / "tools.jsa", "server": tmp_path / "server.jsa"}
    files = kafka.install_files(archives=arch)
    topics = files[f"{kafka.KAFKA_HOME}/bin/kafka-topics.sh"][0]
    start = files[f"{kafka.KAFKA_HOME}/bin/kafka-server-start.sh"][0]
    assert f"-XX:SharedArchiveFile={arch['tools']}" in topics
    assert f"-XX:SharedArchiveFile={arch['server']}" in start
    plain = kafka.install_files()
    assert "SharedArchiveFile" not in "".join(t for t, _ in plain.values())
