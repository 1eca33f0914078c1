"""The ONTAP REST API, through NetApp's own ``netapp-ontap`` library.

``connection(...)`` returns a ``netapp_ontap.HostConnection`` (use it as a context manager).
Certificates are checked: ``verify`` is a CA bundle path (the lab's self-signed certificate,
or a site's own CA from the inventory's ``ontap_ca_bundle``), True (the system trust store)
or, only when an inventory says ``ontap_validate_certs: false``, False. With a bundle the
session ignores REQUESTS_CA_BUNDLE and friends from the environment, which would otherwise
replace ``verify`` with the system bundle.
"""
from __future__ import annotations

from .. import netguard, secrets


def connection(address: str, port: int, user: str, password: str, verify: bool | str):
    from netapp_ontap import HostConnection
    netguard.check(address)
    secrets.register(password)
    conn = HostConnection(address, port=port, username=user, password=password, verify=verify)
    if isinstance(verify, str):
        conn.session.trust_env = False
    return conn
