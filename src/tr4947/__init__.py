"""TR-4947 (Apache Kafka workloads on NetApp NFS storage) as runbook-as-code.

Package layout follows the flow of one procedure:
  paths        where the repo, caches, lab state and build outputs live
  inventory    targets described as Ansible inventories (playbook/inventory/<name>/)
  targets/     run commands and snippets on a target (lab or real, over SSH)
  lab/         the embedded lab: storage (FUSE volumes and mounts), ontap (stand-in), kafka
  cli          the `tr4947` command
"""
__version__ = "0.1.0"
