"""Transports: how the control node reaches a target's hosts.

    ssh         shell commands on Linux hosts and the ONTAP clustershell (asyncssh)
    ontap_rest  the ONTAP REST API (NetApp's netapp-ontap library)
    ansible     the project's playbooks (ansible-runner)

Every transport calls tr4947.netguard.check() before it connects: an address on the lab's
network is contacted only while the lab network exists on this machine.

Targets (tr4947.targets) choose what to run; transports only carry it.
"""
