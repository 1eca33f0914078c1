"""The runbook through the lab described as a remote site (lab-remote: the running lab's
hosts, addresses, SSH user and key, no ``target_kind: lab``), the way a reader runs it on
their own cluster: ``python -m tr4947.runbook CHAPTER --target path/to/hosts.yml``.

* Without ``--confirm`` every chapter runs to its end, its read-only steps reach the hosts
  (each host's sshd ForceCommand logs what it ran) and nothing else does: no planned command
  appears in any host's log, every command the ONTAP stand-in received reads only, and the
  hosts' configuration, fstab, mounts and Kafka data are what they were (looked at through the
  lab's back door, which logs nothing).
* With ``--confirm`` functional-validation, broker-recovery and aws-cvo-storage run end to
  end and file their results under the inventory's name, lab-remote, as a real target's.

The module brings the lab up once, each cluster as the chapters' own lab runs find it (the
functional-validation clusters with Kafka installed, das and nfs with Kafka started).
"""
from __future__ import annotations

import concurrent.futures
import difflib
import json
import os
import subprocess
import sys

import pytest

from tr4947 import paths

from .conftest import own_lab

pytestmark = pytest.mark.lab

CHAPTERS = sorted(p.stem for p in (paths.REPO / "notebooks").glob("*.ipynb"))
# Read through the back door (nsenter, not logged): what a state-changing step would touch
# (configuration, fstab, mounts, the partition directories, which Kafka processes run), not
# what running brokers change by themselves (segment sizes, checkpoints).
HOST_STATE = ("{ cat /etc/fstab; mount | grep -v ' /proc'; "
              "cat /opt/kafka/config/*.properties 2>/dev/null; "
              "for d in /demo /mnt /kafka_fg_vol01 /data /var/lib/kafka; do "
              "[ -d $d ] && find $d -mindepth 1 -maxdepth 2 -type d | sort; done; "
              # Kafka servers by main class and config (not every command line that
              # mentions kafka: an ssh session of the last read may still be closing).
              "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done "
              "| grep -o 'kafka\\.Kafka [^ ]*' | sort; } 2>/dev/null")


def runbook(tl, chapter, results, *args, timeout=1200):
    env = {**os.environ,
           "ONTAP_PASSWORD": tl.lab.credentials()["ontap_passwords"]["admin"],
           "FSXADMIN_PASSWORD": "Lab-Remote-Fsx-1"}
    r = subprocess.run([sys.executable, "-m", "tr4947.runbook", chapter, "--target",
                        str(tl.remote), "--results", str(results), *args],
                       cwd=paths.REPO, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{chapter}: rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    doc = json.loads((results / "lab-remote" / f"{chapter}.json").read_text())
    assert "last_failure" not in doc, doc["last_failure"]
    assert doc["run"]["target"] == "lab-remote" and doc["run"]["kind"] == "real"
    return doc


def hosts(tl) -> list[str]:
    return sorted(p.name for p in (tl.root / "hosts").iterdir())


def ontap_log(tl) -> list[dict]:
    f = tl.root / "ontap" / "commands.log"
    return [json.loads(line) for line in f.read_text().splitlines()] if f.exists() else []


def snapshot(tl) -> dict[str, str]:
    return {h: tl.exec(h, HOST_STATE, check=False).stdout
            for h in hosts(tl) if h not in ("cluster1", "aws")}


def changes(before: dict[str, str], after: dict[str, str]) -> str:
    """What differs, host by host, as a unified diff (empty when nothing does)."""
    return "\n".join(
        f"{h}:\n" + "\n".join(difflib.unified_diff(before[h].splitlines(),
                                                   after.get(h, "").splitlines(), lineterm=""))
        for h in before if before[h] != after.get(h))


#: The module's bring-up: each cluster as the chapters' own lab runs find it.
LAYOUT = {"installed": ["fv_c1", "fv_c2"], "started": ["das", "nfs"]}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with own_lab(tmp_path_factory.mktemp("remote"), up=False) as tl:
        for state, clusters in LAYOUT.items():
            tl.lab.up(clusters, kafka_state=state)
        tl.brought_up_again = False
        yield tl


def test_without_confirm_every_chapter_only_reads(lab, tmp_path):
    before_cmds = {h: len(lab.commands(h)) for h in hosts(lab)}
    before_ontap = len(ontap_log(lab))
    before_state = snapshot(lab)
    planned, ran_reads = [], 0
    # Nothing here changes the hosts, so the chapters read them two at a time (a reader's
    # dry runs could overlap too): most of a chapter's time is its kernel starting and SSH
    # round trips, not CPU.
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        docs = list(pool.map(lambda chapter: runbook(lab, chapter, tmp_path), CHAPTERS))
    for doc in docs:
        assert doc["run"]["parameters"].get("confirm") in (None, False)
        for rec in doc["records"]:
            if rec["kind"] != "console":
                continue
            out = rec["data"].get("output", "")
            if out.startswith("DRY RUN: would"):
                planned.append(rec["data"].get("command", ""))
            elif rec["data"].get("command"):
                ran_reads += 1
    assert planned, "no chapter planned a change: the test proves nothing"
    assert ran_reads, "no read-only step ran"
    new = {h: lab.commands(h)[before_cmds[h]:] for h in hosts(lab)}
    assert any(new.values()), "no command reached any host: read-only steps must run"
    logged = [c for cmds in new.values() for c in cmds]
    for command in planned:
        # A host logs a command as sent: its working directory, then the command as the
        # record prints it. A plan that reached a host would end one of those entries.
        body = command.strip()
        hit = [c for c in logged if body and c.rstrip().endswith(body)]
        assert not hit, f"a planned step reached a host: {command}"
    received = ontap_log(lab)[before_ontap:]
    assert received, "no ONTAP read reached the stand-in"
    changed = [e["command"] for e in received if not e["reads_only"]]
    assert not changed, f"state-changing ONTAP commands without confirm: {changed}"
    diff = changes(before_state, snapshot(lab))
    assert not diff, f"a host's configuration, mounts or data changed:\n{diff}"


# Each chapter starts on hosts as its lab run would find them (a real site is prepared by its
# operator; here the lab's own bring-up does it). functional-validation and broker-recovery
# find them as the module brought them up (each changes only its own clusters' hosts);
# aws-cvo-storage wants nfs with Kafka installed, not started: a bring-up of its own, last.
@pytest.mark.parametrize("chapter, bring_up, args", [
    ("functional-validation", None, ()),
    ("broker-recovery", None, ("-p", "repeats=1", "-p", "sizes_gb=[110]")),
    ("aws-cvo-storage", (["nfs"], "installed"), ()),
])
def test_confirmed_chapter_runs_end_to_end(lab, tmp_path, chapter, bring_up, args):
    if bring_up is None:
        assert not lab.brought_up_again, \
            f"{chapter} runs on the module's bring-up: list it before the chapters that bring " \
            "the lab up again"
    else:
        lab.close_targets()
        lab.lab.down()
        lab.lab.up(bring_up[0], kafka_state=bring_up[1])
        lab.brought_up_again = True
    before_ontap = len(ontap_log(lab))
    doc = runbook(lab, chapter, tmp_path, "--confirm", *args)
    assert doc["run"]["parameters"]["confirm"] is True
    consoles = [r["data"]["output"] for r in doc["records"] if r["kind"] == "console"]
    assert consoles and not any(o.startswith("DRY RUN") for o in consoles)
    changes = [e for e in ontap_log(lab)[before_ontap:] if not e["reads_only"]]
    if chapter != "broker-recovery":            # it changes hosts, not ONTAP
        assert changes and all(e["channel"] in ("ssh", "rest") for e in changes), changes
    if chapter == "broker-recovery":
        standby = lab.commands("das-standby") + lab.commands("nfs-standby")
        assert any("kafka-server-start" in c or "systemctl" in c or "kafka" in c
                   for c in standby), "the replacement broker was not started over SSH"
