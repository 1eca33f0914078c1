"""The ONTAP REST API of a target, through NetApp's own ``netapp-ontap`` library.

``connection(target)`` returns a ``netapp_ontap.HostConnection`` for the target's cluster
management address (inventory group ``ontap``, ``ontap_rest_port``, ``ansible_user``):

* lab: the lab's password and its self-signed certificate as the only trusted CA (the
  session ignores REQUESTS_CA_BUNDLE and friends from the environment, which would otherwise
  replace ``verify`` with the system bundle);
* real: ``ONTAP_PASSWORD`` from the environment; certificates are checked against
  ``ontap_ca_bundle`` from the inventory if set, else the system/REQUESTS_CA_BUNDLE trust
  store. ``ontap_validate_certs: false`` in an inventory switches checks off, visibly.

Reading is allowed without ``confirm``; anything that changes a real cluster must go through
a step that checks ``target.confirm`` (see ``tr4947.targets.playbooks``).
"""
from __future__ import annotations

import os

from ..runbook import secrets
from .base import Target


class RestCredentialsError(RuntimeError):
    pass


def endpoint(target: Target) -> tuple[str, int, str]:
    h = target.inventory.ontap()
    return h.address, int(h.get("ontap_rest_port", 443)), h.get("ansible_user", "admin")


def connection(target: Target):
    from netapp_ontap import HostConnection

    h = target.inventory.ontap()
    host, port, user = endpoint(target)
    if target.kind == "lab":
        from ..lab.ontap import rest
        password = target._ontap_password(h)
        verify: bool | str = str(rest.cert_file(target.root))
    else:
        password = os.environ.get("ONTAP_PASSWORD")
        if not password:
            raise RestCredentialsError(
                f"ONTAP_PASSWORD is not set: export the password of {user}@{host} "
                "(or load it from ansible-vault) first")
        secrets.register(password)
        verify = h.get("ontap_ca_bundle") or bool(h.get("ontap_validate_certs", True))
    conn = HostConnection(host, port=port, username=user, password=password, verify=verify)
    if isinstance(verify, str):
        conn.session.trust_env = False
    return conn
