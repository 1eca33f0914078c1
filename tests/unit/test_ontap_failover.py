"""ONTAP storage failover in the stand-in (`storage failover takeover`/`giveback`/`show`,
show-takeover, show-giveback), strict like ONTAP: a takeover gives the node's aggregates and
data LIFs to its HA partner and records its modelled window in the state; giveback sends the
aggregates home and the LIFs with -auto-revert true; refusals change nothing. The lab's NFS
service refuses sessions on a moved LIF until the state's end of the move, and allows them
after."""
from __future__ import annotations

import json
import time

import pytest

from tr4947.lab.nfs4state import NfsState
from tr4947.lab.ontap import bootstrap, session, state

N1, N2 = "cluster1-01", "cluster1-02"
WINDOW = 0.3                                   # a small modelled time, so no test sleeps long


def make(tmp_path, nodes=(N1, N2), **timing):
    root = tmp_path / "state"
    bootstrap.bootstrap(root, "cluster1", list(nodes),
                        [{"name": "aggr1", "node": N1, "size": "2TB"}]
                        + ([{"name": "aggr2", "node": N2, "size": "1TB"}] if len(nodes) > 1 else []),
                        ["svm_kafka"],
                        [{"name": "lif1", "address": "198.18.10.11", "vserver": "svm_kafka",
                          "node": N1, "auto_revert": True},
                         {"name": "lif2", "address": "198.18.10.12", "vserver": "svm_kafka",
                          "node": N1}]
                        + ([{"name": "lif3", "address": "198.18.10.13", "vserver": "svm_kafka",
                             "node": N2}] if len(nodes) > 1 else []),
                        timing={"takeover_seconds": WINDOW, "giveback_seconds": WINDOW,
                                "migrate_seconds": WINDOW, **timing})
    return root


@pytest.fixture
def root(tmp_path):
    return make(tmp_path)


def run(root, cmd):
    return session.Session(root).run_sync(cmd)


def ok(root, cmd) -> str:
    r = run(root, cmd)
    assert not r.error, r.output
    return r.output


def lifs(root) -> dict[str, tuple[str, str]]:
    return {l.name: (l.curr_node or l.node, l.curr_port or l.port)
            for l in state.load(root).lifs.values()}


def show(root) -> dict[str, tuple[str, str, str]]:
    """storage failover show, as node -> (partner, possible, state description)."""
    out = ok(root, "set -showseparator |; storage failover show -fields "
                   "partner-name,possible,state-description")
    rows = [l.split("|") for l in out.splitlines()[2:] if "|" in l]
    return {r[0]: (r[1], r[2], r[3].strip('"')) for r in rows}


def wait_past(t: float) -> None:
    time.sleep(max(0.0, t - time.time()) + 0.02)


def test_bootstrap_pairs_the_nodes_and_keeps_the_modelled_times(tmp_path):
    c = state.load(make(tmp_path, takeover_seconds=7))
    assert (c.ha(N1).partner, c.ha(N2).partner) == (N2, N1)
    assert (c.takeover_seconds, c.giveback_seconds, c.migrate_seconds) == (7.0, WINDOW, WINDOW)
    c = state.load(_defaults(tmp_path))
    assert (c.takeover_seconds, c.giveback_seconds, c.migrate_seconds) == (
        state.TAKEOVER_SECONDS, state.GIVEBACK_SECONDS, state.MIGRATE_SECONDS)
    with pytest.raises(ValueError, match="takeover_seconds"):
        bootstrap.bootstrap(tmp_path / "bad", nodes=[N1], timing={"takeover_seconds": -1})
    with pytest.raises(ValueError, match="takeover_seconds"):
        bootstrap.bootstrap(tmp_path / "bad2", nodes=[N1], timing={"reboot_seconds": 1})


def _defaults(tmp_path):
    root = tmp_path / "defaults"
    bootstrap.bootstrap(root, "cluster1", [N1, N2])
    return root


def test_takeover_moves_aggregates_and_data_lifs_and_records_the_window(root):
    before = time.time()
    assert ok(root, f"storage failover takeover -ofnode {N1}") == ""
    after = time.time()
    c = state.load(root)
    assert {g.name: (g.node, g.current_node) for g in c.aggregates.values()} == {
        "aggr1": (N1, N2), "aggr2": (N2, N2)}
    assert lifs(root) == {"lif1": (N2, "e0d"), "lif2": (N2, "e0d"), "lif3": (N2, "e0d")}
    ha = c.ha(N1)
    assert ha.taken_over_by == N2
    assert before <= ha.takeover_start <= after
    assert ha.takeover_end == pytest.approx(ha.takeover_start + WINDOW)
    # the moved LIFs are away until the takeover ends; lif3 never moved
    assert [l.moving_until for l in c.lifs.values()] == [ha.takeover_end, ha.takeover_end, 0.0]
    aggr = ok(root, "storage aggregate show -fields node,home-name,owner-name")
    assert f"aggr1     {N2} {N1} {N2}" in aggr and f"aggr2     {N2} {N2} {N2}" in aggr


def test_show_before_during_and_after(root):
    assert show(root) == {N1: (N2, "true", f"Connected to {N2}"),
                          N2: (N1, "true", f"Connected to {N1}")}
    ok(root, f"storage failover takeover -bynode {N2}")          # the same takeover
    assert show(root) == {N1: (N2, "-", "Waiting for giveback (HA mailboxes)"),
                          N2: (N1, "false", "Takeover in progress")}
    assert "Takeover in progress" in ok(root, "storage failover show-takeover")
    wait_past(state.load(root).ha(N1).takeover_end)
    assert show(root)[N2] == (N1, "false", "In takeover")
    out = ok(root, "storage failover show-takeover")
    assert "Takeover completed" in out and "Done" in out
    assert "Not attempted yet" in ok(root, f"storage failover show-giveback -node {N2}")
    out = ok(root, f"storage failover giveback -ofnode {N1}")
    assert "storage failover show-giveback" in out
    st = show(root)
    assert "Waiting for cluster applications to come online" in st[N1][2]
    assert st[N2][2] == f"Connected to {N1}, Partial giveback"
    assert "In progress" in ok(root, "storage failover show-giveback")
    wait_past(state.load(root).ha(N1).giveback_end)
    assert show(root)[N1] == (N2, "true", f"Connected to {N2}")
    assert "Done" in ok(root, "storage failover show-giveback")
    # the default table wraps a long description inside its column
    assert ok(root, f"storage failover show -node {N1}").splitlines()[-1].startswith(
        f"{N1}    {N2}    true     Connected to {N2}")


def test_giveback_returns_aggregates_and_auto_revert_lifs(root):
    ok(root, f"storage failover takeover -ofnode {N1}")
    wait_past(state.load(root).ha(N1).takeover_end)
    t = time.time()
    ok(root, f"storage failover giveback -ofnode {N1}")
    c = state.load(root)
    assert all(g.owner == "" for g in c.aggregates.values())
    assert c.ha(N1).taken_over_by == "" and c.ha(N1).giveback_start >= t
    # lif1 (-auto-revert true) goes home with the giveback and is away for its window;
    # lif2 (ONTAP's default, false) stays on the partner until it is reverted
    assert lifs(root) == {"lif1": (N1, "e0d"), "lif2": (N2, "e0d"), "lif3": (N2, "e0d")}
    assert c.lifs["lif1"].moving_until == c.ha(N1).giveback_end
    assert c.lifs["lif2"].moving_until == c.ha(N1).takeover_end
    out = ok(root, "network interface show -fields is-home,auto-revert")
    assert "lif1 true    true" in out and "lif2 false   false" in out
    ok(root, "network interface revert -vserver svm_kafka -lif lif2")
    assert lifs(root)["lif2"] == (N1, "e0d")


def _state_bytes(root) -> dict:
    return json.loads((root / "ontap" / "state.json").read_text())


@pytest.mark.parametrize("setup,cmd,message", [
    ([], "storage failover takeover -ofnode cluster1-09",
     '"cluster1-09" is an invalid value for field "-ofnode {<nodename>|local}"'),
    ([], "storage failover takeover", 'Specify exactly one of "-ofnode" or "-bynode"'),
    ([], f"storage failover takeover -ofnode {N1} -bynode {N2}", "Specify exactly one of"),
    ([], f"storage failover takeover -ofnode {N1} -option sideways",
     '"sideways" is an invalid value for field "-option'),
    ([f"storage failover takeover -ofnode {N1}"], f"storage failover takeover -ofnode {N1}",
     f'Node "{N1}" is already taken over by "{N2}"'),
    ([f"storage failover takeover -ofnode {N1}"], f"storage failover takeover -ofnode {N2}",
     f'Node "{N1}" is already taken over by "{N2}"'),
    ([], f"storage failover giveback -ofnode {N1}",
     f'Failed to initiate giveback. Reason: Node "{N2}" is not in takeover state.'),
    ([], f"storage failover giveback -fromnode {N2}", f'Node "{N2}" is not in takeover state.'),
    ([f"storage failover takeover -ofnode {N1}"], f"storage failover giveback -ofnode {N1}",
     "is in progress"),                                        # the takeover's window
    ([], "storage failover giveback -ofnode nonode", 'invalid value for field "-ofnode'),
])
def test_refusals_leave_the_state_unchanged(tmp_path, setup, cmd, message):
    root = make(tmp_path, takeover_seconds=30)                  # still in progress
    for s in setup:
        ok(root, s)
    before = _state_bytes(root)
    r = run(root, cmd)
    assert r.error and message in r.output, r.output
    assert _state_bytes(root) == before


def test_a_one_node_cluster_has_no_partner_and_refuses_takeover(tmp_path):
    root = make(tmp_path, nodes=(N1,))
    assert show(root) == {N1: ("-", "false", "Non-HA mode")}
    before = _state_bytes(root)
    for cmd in (f"storage failover takeover -ofnode {N1}", "storage failover takeover -bynode local"):
        r = run(root, cmd)
        assert r.error and "has no HA partner" in r.output, r.output
    assert _state_bytes(root) == before


def test_a_takeover_waits_for_a_giveback_in_progress(tmp_path):
    root = make(tmp_path, giveback_seconds=30)
    ok(root, f"storage failover takeover -ofnode {N1}")
    wait_past(state.load(root).ha(N1).takeover_end)
    ok(root, f"storage failover giveback -ofnode {N1}")
    r = run(root, f"storage failover takeover -ofnode {N1}")
    assert r.error and "A giveback to node" in r.output


# --- the NFS service's window ---------------------------------------------------------------------
def test_nfs_refuses_sessions_on_a_moved_lif_until_the_takeover_ends(root):
    nfs = NfsState(root)
    assert nfs.session_allowed("198.18.10.11") and nfs.session_allowed("198.18.10.13")
    ok(root, f"storage failover takeover -ofnode {N1}")
    end = state.load(root).ha(N1).takeover_end
    assert nfs.away_until("198.18.10.11") == end
    assert not nfs.session_allowed("198.18.10.11")             # moved with the takeover
    assert nfs.session_allowed("198.18.10.13")                 # already on the partner
    assert nfs.drop_lif("198.18.10.11") == 0                   # no session to close here
    wait_past(end)
    assert nfs.session_allowed("198.18.10.11")


def test_nfs_window_of_a_migration_is_the_states_migrate_time(tmp_path):
    root = make(tmp_path, migrate_seconds=0.2)
    nfs = NfsState(root)
    t = time.time()
    ok(root, "set advanced -confirmations off; network interface migrate -vserver svm_kafka "
             f"-lif lif2 -destination-node {N2}")
    until = nfs.away_until("198.18.10.12")
    assert t + 0.2 <= until <= time.time() + 0.2
    assert not nfs.session_allowed("198.18.10.12") and nfs.session_allowed("198.18.10.11")
    wait_past(until)
    assert nfs.session_allowed("198.18.10.12")
    # a revert is a move too; reverting a LIF already home is not
    ok(root, "network interface revert -vserver svm_kafka -lif lif2")
    assert not nfs.session_allowed("198.18.10.12")
    wait_past(nfs.away_until("198.18.10.12"))
    ok(root, "network interface revert -vserver svm_kafka -lif lif2")
    assert nfs.session_allowed("198.18.10.12")


def test_the_watcher_drops_sessions_when_a_lif_moves_and_back_between_polls(root):
    """A migration and a revert between two polls leave the place unchanged, but the move
    is recorded: the sessions on the address are dropped all the same."""
    nfs = NfsState(root)
    dropped = []
    nfs.drop_lif = lambda address: dropped.append(address) or 0
    nfs.watch_lifs(interval=0.05)
    try:
        time.sleep(0.1)
        ok(root, "set advanced -confirmations off; network interface migrate -vserver svm_kafka "
                 f"-lif lif1 -destination-node {N2}; network interface revert -vserver svm_kafka "
                 "-lif lif1")
        deadline = time.time() + 2
        while not dropped and time.time() < deadline:
            time.sleep(0.02)
        assert dropped == ["198.18.10.11"]
    finally:
        nfs.stop()
