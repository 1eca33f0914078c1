"""The lab's names and plan, without building anything: interface and namespace names that
fit the kernel's limits and carry the lab's id, the lab network confined to 198.18.0.0/15,
and the hosts a lab would build from an inventory."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tr4947 import netguard, paths
from tr4947.lab.lab import Lab, LabError, volume_create_command
from tr4947.lab.network import Network, NetworkError, lab_id

from ..support.inventory_copy import copy_inventory

IFNAMSIZ = 16          # the kernel's limit on an interface name, with its terminating NUL


@pytest.mark.parametrize("root", ["/tmp/tr4947-lab", "/tmp/pytest-of-root/pytest-1/lab0/state",
                                  "/" + "very-long-directory-name/" * 12 + "state"])
def test_names_carry_the_lab_id_and_fit_the_kernels_limits(root):
    n = Network.for_lab(Path(root), "198.18.0.0/16", "198.18.0.1")
    assert re.fullmatch(r"[0-9a-f]{4}", n.id) and n.id == lab_id(Path(root))
    assert n.control_link == netguard.CONTROL_PREFIX + n.id      # netguard knows it as a lab's
    assert len(n.control_link) < IFNAMSIZ
    assert n.switch == f"tr4947-{n.id}-switch"
    assert n.netns("fv_c1-broker-1") == f"tr4947-{n.id}-fv_c1-broker-1"
    assert n.netns_path("client-1") == Path("/run/netns") / f"tr4947-{n.id}-client-1"


def test_the_id_is_the_state_directorys(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    assert lab_id(a) == lab_id(tmp_path / "x" / ".." / "a")   # the same directory
    assert lab_id(a) != lab_id(b)                               # a test lab is another lab


@pytest.mark.parametrize("subnet", ["10.0.0.0/8", "198.20.0.0/16", "198.17.255.0/24",
                                    "198.16.0.0/14", "0.0.0.0/0"])
def test_a_lab_network_outside_the_benchmarking_range_is_refused(subnet):
    with pytest.raises(NetworkError, match="outside 198.18.0.0/15"):
        Network.for_lab(Path("/tmp/x"), subnet, subnet.split("/")[0])


@pytest.mark.parametrize("subnet,control", [("198.18.0.0/16", "198.18.0.1"),
                                            ("198.19.0.0/16", "198.19.0.1"),
                                            ("198.18.0.0/15", "198.19.255.254"),
                                            ("198.19.128.0/17", "198.19.128.1")])
def test_lab_networks_inside_the_range(subnet, control):
    n = Network.for_lab(Path("/tmp/x"), subnet, control)
    n.check(control)
    with pytest.raises(NetworkError, match="is not on the lab network"):
        n.check("192.0.2.1")


def test_the_control_address_must_be_on_the_lab_network():
    with pytest.raises(NetworkError, match="lab_control_address 198.19.0.1 is not in 198.18.0.0/16"):
        Network.for_lab(Path("/tmp/x"), "198.18.0.0/16", "198.19.0.1")


# --- a lab from an inventory ------------------------------------------------------------------
def remapped(tmp_path, network="198.19", edit=lambda t: t):
    """The lab inventory (every file of it) on ``network``, with ``edit`` applied."""
    return copy_inventory(paths.INVENTORY / "lab", tmp_path / "lab",
                          lambda t: edit(re.sub(r"\b198\.18\.", network + ".", t)))


def test_a_lab_plans_its_hosts_from_the_inventory(tmp_path):
    root = tmp_path / "state"
    lab = Lab(remapped(tmp_path), root=root, echo=None)
    assert lab.root == root.resolve() and str(lab.net.subnet) == "198.19.0.0/16"
    specs = lab.specs()
    ontap = specs["cluster1"]
    # The storage host answers for the whole storage block and runs the three services.
    assert (ontap.role, ontap.addresses, ontap.anyip) == ("ontap", ["198.19.10.1"],
                                                          "198.19.10.0/24")
    assert all(f"--state-root {lab.root}" in ontap.command[-1].split("& ")[i]
               for i in range(3))
    assert "tr4947.lab.storage --listen 0.0.0.0:2049" in ontap.command[-1]
    assert specs["aws"].addresses == ["198.19.20.1"]
    assert "--management 198.19.10.1" in specs["aws"].command[-1]
    # A recovery broker has its SSH address and its movable Kafka address.
    assert specs["das-broker-1"].addresses == ["198.19.3.11", "198.19.3.1"]
    assert specs["das-standby"].addresses == ["198.19.3.19"]
    # Linux hosts never see the lab's state (keys, passwords); they share only the volumes.
    b = specs["fv_c1-broker-1"]
    assert b.role == "linux" and str(lab.root) in b.hidden
    assert b.binds == [str(lab.root / "volumes")]
    every = [a for s in specs.values() for a in s.addresses]
    assert len(every) == len(set(every)) and all(a.startswith("198.19.") for a in every)
    # What `up` builds: the storage side and clients, then the clusters asked for.
    clients = [h.name for h in lab.inv.select("clients")]
    assert "client-1" in clients
    assert lab._wanted([]) == ["cluster1", "aws", *clients]
    assert lab._wanted(["das"])[2 + len(clients):] == [
        "das-controller", "das-broker-1", "das-broker-2", "das-broker-3", "das-standby"]
    assert lab.clusters(None) == ["fv_c1", "fv_c2"]
    with pytest.raises(LabError, match="unknown cluster nope .* valid clusters: fv_c1, fv_c2, "
                                       "das, nfs"):
        lab.clusters(["nope"])


def test_a_lab_inventory_off_the_lab_network_or_a_real_one_is_refused(tmp_path):
    bad = remapped(tmp_path / "a", edit=lambda t: t.replace("lab_network: 198.19.0.0/16",
                                                            "lab_network: 10.19.0.0/16"))
    with pytest.raises(LabError, match="outside 198.18.0.0/15"):
        Lab(bad, root=tmp_path / "s")
    real = remapped(tmp_path / "b", edit=lambda t: t.replace("target_kind: lab",
                                                             "target_kind: real"))
    with pytest.raises(LabError, match="does not describe a lab"):
        Lab(real, root=tmp_path / "s")


def test_down_refuses_to_remove_a_directory_that_is_not_a_labs(tmp_path):
    root = tmp_path / "not-a-lab"
    root.mkdir()
    (root / "thesis.tex").write_text("years of work")
    with pytest.raises(LabError, match="does not look like a lab state directory"):
        Lab(remapped(tmp_path), root=root, echo=None).down()
    assert (root / "thesis.tex").exists()


def test_volume_create_command_is_fv1s():
    assert volume_create_command("svm_kafka", "v1", {"aggregate": "aggr2", "size": "100GB",
                                                      "junction_path": "/v1",
                                                      "preserve_unlink": True}) == (
        "volume create -vserver svm_kafka -volume v1 -aggregate aggr2 -size 100GB "
        "-state online -security-style unix -unix-permissions 0777 -junction-path /v1 "
        "-type RW -is-preserve-unlink-enabled true")
    assert "-is-preserve-unlink-enabled" not in volume_create_command("s", "v", {})
