"""DRL-6, storage failover: the HA partner takes over the node that owns broker 1's data LIF
and aggregate, then gives the storage back, with ONTAP's own commands (what every
nondisruptive upgrade does to each node of a pair)."""
from __future__ import annotations

import time

from ...wait import until
from .. import space_check as sc
from .harness import SNIP, Harness
from .report import not_run, report
from .runs import Run
from .sides import Side

#: How long a takeover or a giveback may take before the drill gives up on it (ONTAP's own
#: guidance for a planned takeover is seconds to a couple of minutes).
DONE_TIMEOUT_S = 240
#: The client's measured outages, as the run's columns (lab only: the NFS layer reports them).
OUTAGE_KEYS = ("NFS client outage at the takeover (s)", "NFS client outage when the LIF went "
               "home (s)")
#: From the giveback to the producers' resuming after the LIF's own return (no auto-revert).
BACK_KEY = "after the giveback and the LIF's return: producers resumed (s)"


def run(harness: Harness, held_s: float) -> None:
    """DRL-6: takeover of the node that owns broker 1's data LIF, ``held_s`` on the partner
    alone once the takeover is complete, giveback, and the LIF sent home."""
    s = harness.sides.get("nfs")
    if s is None or not s.lif or not harness.ontap:
        not_run(harness, "DRL-6", "needs an NFS cluster on ONTAP and the data LIF broker 1 "
                                  "mounts from in the inventory (ontap_data_lifs)")
        return
    t = harness.t
    args = {"svm": harness.svm, "lif": s.lif["name"]}
    lif = t.run_snippet(SNIP + "DRL-2-lif-show.ontap", harness.ontap, read_only=True,
                        check=True, needs=harness.setup, **args)
    pair = t.run_snippet(SNIP + "DRL-6-failover-show.ontap", harness.ontap, read_only=True,
                         check=True, needs=harness.setup)
    home = next((x.get("home-node") for x in sc.fields_table(lif.stdout)), None) or "HOME_NODE"
    rows = {x.get("node"): x for x in sc.fields_table(pair.stdout)}
    partner = (rows.get(home) or {}).get("partner-name") or "PARTNER_NODE"
    harness.rec.show("DRL-6", "ONTAP: the HA pair before the drill", pair, prompt="::>")
    row = rows.get(home) or {}
    if not pair.planned and row.get("possible") != "true":
        said = row.get("state-description", "no HA partner")
        not_run(harness, "DRL-6", f"ONTAP says a takeover of {home} is not possible now "
                                  f"({said}); an HA pair in its normal state is needed")
        return

    def state_of(node: str) -> str:
        r = t.run_snippet(SNIP + "DRL-6-node-state.ontap", harness.ontap, read_only=True,
                          check=True, node=node)
        got = sc.fields_table(r.stdout)
        return got[0].get("state-description", "") if got else ""

    def inject(s: Side, n: int, w) -> Run | None:
        before = harness.client_outages(s)
        r1 = t.run_snippet(SNIP + "DRL-6-takeover.ontap", harness.ontap, check=True, node=home)
        fault = time.time()
        if not r1.planned:
            until(lambda: state_of(partner).startswith("In takeover"), DONE_TIMEOUT_S, 1,
                  f"{partner} to hold {home}'s storage (storage failover show)",
                  seen=lambda: state_of(partner))
            taken = time.time()
            # The pair runs on one node for held_s once the takeover is complete (as while
            # the taken-over node is updated), and the clients' outage is behind them.
            time.sleep(max(0.0, taken + held_s - time.time()))
        r2 = t.run_snippet(SNIP + "DRL-6-giveback.ontap", harness.ontap, check=True,
                           needs=r1, node=home)
        back = time.time()
        if not r2.planned:
            until(lambda: state_of(home) == f"Connected to {partner}", DONE_TIMEOUT_S, 1,
                  f"the giveback to {home} to complete (storage failover show)",
                  seen=lambda: state_of(home))
        # A LIF without auto-revert stays on the partner after the giveback: sent home, as
        # the upgrade procedure does (a LIF that is home already does not move).
        r3 = t.run_snippet(SNIP + "DRL-2-lif-revert.ontap", harness.ontap, check=True,
                           needs=r2, **args)
        where = t.run_snippet(SNIP + "DRL-2-lif-show.ontap", harness.ontap, read_only=True,
                              check=True, needs=r3, **args)
        if n == 0:
            for title, x in ((f"{partner} takes over {home}", r1), ("The storage goes home",
                                                                    r2),
                             ("The LIF goes home", r3), ("Where it is", where)):
                s.rec.show("DRL-6", title, x, prompt="::>")
        if r1.planned:
            return None
        run = Run("DRL-6", s.name, n, fault, back)
        run.extra["takeover complete after (s)"] = round(taken - fault, 1)
        harness.back_home(w, run, "the takeover and giveback", s, before, OUTAGE_KEYS)
        if n == 0:
            harness.log_lines("DRL-6", s, run, [s.b1])
        return run
    o = harness.drill("DRL-6", s, inject, "Storage failover")
    harness.there_and_back(o, BACK_KEY)         # the takeover; the giveback and the LIF home
    report(harness, "DRL-6", [o], f"takeover of {home} by {partner}, giveback after "
                                  f"{held_s:g} s")
