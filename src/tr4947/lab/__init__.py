"""The embedded lab: real hosts on a network of their own, on this one machine.

    network     namespaces, the lab switch and the control node's port
    hosts       one Linux machine per inventory host (overlay root, pid namespace, sshd)
    kafka       Kafka's installation and configuration on the hosts
    nfsclient   the hosts' NFS client (mount/umount/df; FUSE mounts of stand-in volumes)
    storage     the storage stand-in's NFS service (which volume, which semantics)
    ontap/      the ONTAP stand-in (clustershell over SSH, REST API)
    fsx         the AWS FSx stand-in (moto)
    lab         `tr4947 lab up|down|status`: the whole lab's life cycle

The lab sits beside the targets: it provides hosts and imports nothing from targets,
transports, procedures or the runbook. Its public API is :class:`Lab`.
"""
from .lab import Lab, LabError, LabInterrupted

__all__ = ["Lab", "LabError", "LabInterrupted"]
