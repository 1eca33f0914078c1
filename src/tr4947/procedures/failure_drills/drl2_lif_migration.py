"""DRL-2, LIF migration: the data LIF broker 1 mounts from moves to the partner node and back,
with ONTAP's own commands."""
from __future__ import annotations

import time

from .. import space_check as sc
from .harness import SNIP, Harness
from .report import not_run, report
from .runs import Run
from .sides import Side

#: The client's measured outages, as the run's columns (lab only: the NFS layer reports them).
OUTAGE_KEYS = ("NFS client outage at the move (s)", "NFS client outage at the move back (s)")


def run(harness: Harness, away_s: float) -> None:
    """DRL-2: the data LIF broker 1 mounts from moves to the partner node and, ``away_s``
    later, back home."""
    s = harness.sides.get("nfs")
    if s is None or not s.lif or not harness.ontap:
        not_run(harness, "DRL-2", "needs an NFS cluster on ONTAP and the data LIF broker 1 "
                                  "mounts from in the inventory (ontap_data_lifs)")
        return
    args = {"svm": harness.svm, "lif": s.lif["name"]}
    # The LIF's home node and another node of the cluster (its HA partner), from ONTAP.
    lif = harness.t.run_snippet(SNIP + "DRL-2-lif-show.ontap", harness.ontap, read_only=True,
                                check=True, needs=harness.setup, **args)
    nodes = harness.t.run_snippet(SNIP + "DRL-2-nodes.ontap", harness.ontap, read_only=True,
                                  check=True, needs=harness.setup)
    home = next((x.get("home-node") for x in sc.fields_table(lif.stdout)), None)
    others = [x["node"] for x in sc.fields_table(nodes.stdout)
              if x.get("node") not in (home, None)]
    partner = others[0] if others else "PARTNER_NODE"
    if not lif.planned and not others:
        not_run(harness, "DRL-2", f"ONTAP shows no node besides {home} to move the LIF to")
        return
    harness.rec.show("DRL-2", "ONTAP: the cluster's nodes", nodes, prompt="::>", show=False)

    def inject(s: Side, n: int, w) -> Run | None:
        before = harness.t.run_snippet(SNIP + "DRL-2-nfsstat.sh", s.b1.name, read_only=True,
                                       needs=harness.setup)
        measured = harness.client_outages(s)
        r1 = harness.t.run_snippet(SNIP + "DRL-2-lif-migrate.ontap", harness.ontap, check=True,
                                   node=partner, **args)
        fault = time.time()
        where = harness.t.run_snippet(SNIP + "DRL-2-lif-show.ontap", harness.ontap,
                                      read_only=True, check=True, needs=r1, **args)
        if not r1.planned:
            time.sleep(max(0.0, fault + away_s - time.time()))
        r2 = harness.t.run_snippet(SNIP + "DRL-2-lif-revert.ontap", harness.ontap, check=True,
                                   **args)
        heal = time.time()
        home_again = harness.t.run_snippet(SNIP + "DRL-2-lif-show.ontap", harness.ontap,
                                           read_only=True, check=True, needs=r2, **args)
        if n == 0:
            for title, x in ((f"The LIF moves to {partner}", r1), ("Where it is", where),
                             ("Back home", r2), ("Where it is", home_again)):
                s.rec.show("DRL-2", title, x, prompt="::>")
        if r1.planned:
            return None
        run = Run("DRL-2", s.name, n, fault, heal)
        harness.back_home(w, run, "the LIF moves", s, measured, OUTAGE_KEYS)
        if n == 0:
            after = harness.t.run_snippet(SNIP + "DRL-2-nfsstat.sh", s.b1.name, read_only=True)
            s.rec.show("DRL-2", f"{s.b1.name}: the NFS client's counters before the "
                          "move", before, show=False)
            s.rec.show("DRL-2", "... and after it and back", after)
            harness.log_lines("DRL-2", s, run, [s.b1])
        return run
    o = harness.drill("DRL-2", s, inject, "LIF migration")
    harness.there_and_back(o, "after the revert: producers resumed (s)")
    report(harness, "DRL-2", [o], f"LIF {s.lif['name']} to {partner} and back after "
                                  f"{away_s:g} s")
