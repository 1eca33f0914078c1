"""The guide's own versions of every step that creates a Kafka volume or mounts one build the
layout the guide calls safe: preserve-unlink on the volume, NFSv4.1 pinned on the client.

The TR's lines as printed are kept beside them as ``*.tr-as-written.*`` and are exempt; so is
the functional-validation cluster 2, which is unsafe on purpose (the TR's generic NFSv3
cluster, the one that shows the failure)."""
import json
import re

from tr4947 import paths

SNIPPETS = paths.SNIPPETS
NOTEBOOKS = SNIPPETS.parent / "notebooks"
UNSAFE_ON_PURPOSE = {
    "functional-validation/FV-2-lab-generic-nfsv3-volume.ontap",   # cluster 2's volume
    "functional-validation/FV-2-mount-cluster2.sh",                 # cluster 2's NFSv3 mount
}


def guide_snippets(suffixes):
    for p in sorted(SNIPPETS.rglob("*")):
        name = p.relative_to(SNIPPETS).as_posix()
        if p.suffix in suffixes and ".tr-as-written." not in p.name and name not in UNSAFE_ON_PURPOSE:
            yield name, p.read_text()


def test_every_volume_create_sets_preserve_unlink_at_advanced_privilege():
    creating = []
    for name, text in guide_snippets({".ontap"}):
        lines = [l.strip() for l in text.splitlines() if l.strip() and not l.startswith("#")]
        creates = [l for l in lines if l.startswith("volume create")]
        if not creates:
            continue
        creating.append(name)
        missing = [l for l in creates if "-is-preserve-unlink-enabled true" not in l]
        assert not missing, f"{name}: volume create without preserve-unlink: {missing[0]}"
        first = lines.index(creates[0])
        assert "set -privilege advanced" in lines[:first], \
            f"{name}: -is-preserve-unlink-enabled is an advanced parameter; set the privilege first"
    assert len(creating) >= 4, creating      # CVO-1, CVO-7, FSX-5, FV-1 at least


def test_every_nfs_mount_pins_nfsv41():
    mounting = []
    for name, text in guide_snippets({".fstab", ".sh"}):
        for line in text.splitlines():
            if line.lstrip().startswith("#"):
                continue
            fstab_nfs = name.endswith(".fstab") and len(line.split()) >= 4 and \
                line.split()[2].startswith("nfs")
            cli_nfs = re.search(r"\bmount\s+-t\s+nfs4?\b", line)
            if fstab_nfs or cli_nfs:
                mounting.append(name)
                opts = line.split()[3] if fstab_nfs else line
                assert re.search(r"\bvers=4\.[12]\b", opts), f"{name}: NFS version not pinned: {line}"
    assert {"aws-cvo/CVO-3-nfs-mounts.fstab", "aws-fsx/FSX-5-nfs-mounts.fstab",
            "aff-a900/AFF-3-mount.sh"} <= set(mounting), mounting


def test_playbook_volumes_are_followed_by_preserve_unlink():
    # na_ontap_volume has no preserve-unlink option: every notebook that runs the guide's AFF-1
    # playbook sets it with PRE-2's ONTAP command afterwards.
    for nb in sorted(NOTEBOOKS.glob("*.ipynb")):
        code = "\n".join("".join(c["source"]) for c in json.loads(nb.read_text())["cells"]
                         if c["cell_type"] == "code")
        at = code.find('"AFF-1-flexgroup.yml"')
        if at >= 0:
            assert "PRE-2-preserve-unlink.ontap" in code[at:], \
                f"{nb.name} creates the FlexGroup without setting preserve-unlink after it"
