"""The pacer holds a target rate (within 5%) when the sink keeps up, and says so when not;
OMB's RateController ramps up and backs off as OMB's does."""
import time

from tr4947.omb.pacer import Pacer, RateController


def drive(pacer: Pacer, seconds: float, cost_per_msg: float = 0.0) -> int:
    """Send through the pacer for `seconds`; each message costs `cost_per_msg` (busy wait)."""
    sent = 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        n, _ = pacer.due()
        if n == 0:
            pacer.wait()
            continue
        pacer.take(n)
        if cost_per_msg:
            t = time.perf_counter() + n * cost_per_msg
            while time.perf_counter() < t:
                pass
        sent += n
    return sent


def test_pacer_holds_rate_against_fast_sink():
    for rate in (1_000, 50_000):
        p = Pacer(rate)
        sent = drive(p, 1.0)
        assert abs(sent - rate) / rate < 0.05, (rate, sent)
        assert p.keeping_up()


def test_pacer_reports_slow_sink():
    # Sink takes 100 us per message: 10k msg/s at best, target 50k.
    p = Pacer(50_000)
    sent = drive(p, 1.0, cost_per_msg=100e-6)
    assert sent < 0.5 * 50_000
    assert not p.keeping_up()
    assert p.behind() > 0.5


def test_pacer_intended_times_and_rate_change():
    p = Pacer(1000, clock=lambda: 10.0)
    assert p.intended(0) == 10.0 and abs(p.intended(500) - 10.5) < 1e-9
    p.set_rate(2000)
    assert p.rate == 2000 and p.scheduled == 0


def test_rate_controller_ramps_up_then_backs_off():
    rc = RateController()
    # producers and consumers keep up: rate doubles (ramping factor 1)
    r = rc.next_rate(10_000, 3.0, total_published=30_000, total_received=30_000)
    assert r == 20_000
    # consumers 5,000 behind: back off to what was received
    r2 = rc.next_rate(r, 3.0, total_published=90_000, total_received=85_000)
    assert r2 < r and r2 <= (85_000 - 30_000) / 3.0 + 1
    # no subscriptions: only the publish side counts
    rc2 = RateController()
    assert rc2.next_rate(10_000, 3.0, 30_000, None) == 20_000
