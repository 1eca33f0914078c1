//! The gate every request of a mount passes: shut while a drill pauses the mount (as a hard
//! mount blocks while its server is away) or while the mount's connection to the storage
//! stand-in is down (after its data LIF moved, or its server stopped answering), open
//! otherwise. On a hard mount requests wait as long as it takes; on a soft mount (nfs(5)'s
//! `soft`) a request gives up once its major timeout has passed, and the caller fails it with
//! EIO, as the kernel does.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

#[derive(Default)]
struct State {
    paused: bool,
    until: Option<Instant>, // a pause with a time limit ends by itself
    disconnected: bool,
    silent: bool, // connected, but the server answers nothing (see server.rs's keepalive)
}

#[derive(Default)]
pub struct Gate {
    state: Mutex<State>,
    cv: Condvar,
}

/// A soft mount's request that found the gate shut for longer than its major timeout.
#[derive(Debug, PartialEq, Eq)]
pub struct TimedOut;

impl Gate {
    /// Block until the gate is open, for at most `limit` (none: as long as it takes); Ok(true)
    /// if the caller had to wait, Err(TimedOut) if the limit passed with the gate still shut.
    pub fn pass_within(&self, limit: Option<Duration>) -> Result<bool, TimedOut> {
        let deadline = limit.map(|d| Instant::now() + d);
        let mut s = self.state.lock().unwrap();
        let mut waited = false;
        loop {
            let now = Instant::now();
            if s.paused && s.until.is_some_and(|t| now >= t) {
                s.paused = false;
                s.until = None;
                self.cv.notify_all();
            }
            if !s.paused && !s.disconnected && !s.silent {
                return Ok(waited);
            }
            if deadline.is_some_and(|d| now >= d) {
                return Err(TimedOut);
            }
            waited = true;
            // Wake for whichever comes first: the timed pause's end, the caller's limit.
            let wake = [s.until.filter(|_| s.paused), deadline].into_iter().flatten().min();
            s = match wake {
                Some(t) => self.cv.wait_timeout(s, t.saturating_duration_since(now)).unwrap().0,
                None => self.cv.wait(s).unwrap(),
            };
        }
    }

    pub fn pause(&self, seconds: Option<f64>) {
        let mut s = self.state.lock().unwrap();
        s.paused = true;
        s.until = seconds.map(|x| Instant::now() + Duration::from_secs_f64(x.max(0.0)));
        self.cv.notify_all();
    }

    pub fn resume(&self) {
        let mut s = self.state.lock().unwrap();
        s.paused = false;
        s.until = None;
        self.cv.notify_all();
    }

    pub fn set_connected(&self, up: bool) {
        let mut s = self.state.lock().unwrap();
        s.disconnected = !up;
        self.cv.notify_all();
    }

    pub fn set_answering(&self, yes: bool) {
        let mut s = self.state.lock().unwrap();
        s.silent = !yes;
        self.cv.notify_all();
    }

    /// (paused, seconds left of a timed pause, connected, answering)
    pub fn status(&self) -> (bool, Option<f64>, bool, bool) {
        let mut s = self.state.lock().unwrap();
        if let Some(t) = s.until {
            if Instant::now() >= t {
                s.paused = false;
                s.until = None;
            }
        }
        let left = s.until.map(|t| t.saturating_duration_since(Instant::now()).as_secs_f64());
        (s.paused, left, !s.disconnected, !s.silent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn open_gate_does_not_wait() {
        assert_eq!(Gate::default().pass_within(None), Ok(false));
    }

    #[test]
    fn timed_pause_ends_by_itself() {
        let g = Gate::default();
        g.pause(Some(0.2));
        let t = Instant::now();
        assert_eq!(g.pass_within(None), Ok(true));
        assert!(t.elapsed() >= Duration::from_millis(190));
        assert!(!g.status().0);
    }

    #[test]
    fn a_soft_wait_gives_up_at_its_limit() {
        let g = Gate::default();
        assert_eq!(g.pass_within(Some(Duration::from_millis(50))), Ok(false)); // open: no wait
        g.pause(None);
        let t = Instant::now();
        assert_eq!(g.pass_within(Some(Duration::from_millis(200))), Err(TimedOut));
        assert!(t.elapsed() >= Duration::from_millis(190), "{:?}", t.elapsed());
        assert!(g.status().0, "giving up does not open the gate");
        // A timed pause that ends before the limit lets the request through.
        g.pause(Some(0.1));
        assert_eq!(g.pass_within(Some(Duration::from_secs(5))), Ok(true));
        // A disconnection counts as shut, like a pause, and so does a silent server.
        g.set_connected(false);
        assert_eq!(g.pass_within(Some(Duration::from_millis(50))), Err(TimedOut));
        g.set_connected(true);
        g.set_answering(false);
        assert_eq!(g.pass_within(Some(Duration::from_millis(50))), Err(TimedOut));
        assert_eq!(g.status(), (false, None, true, false));
        g.set_answering(true);
        assert_eq!(g.pass_within(Some(Duration::from_millis(50))), Ok(false));
    }

    #[test]
    fn resume_and_reconnect_release_waiters() {
        let g = Arc::new(Gate::default());
        g.pause(None);
        g.set_connected(false);
        let g2 = g.clone();
        let h = std::thread::spawn(move || g2.pass_within(None));
        std::thread::sleep(Duration::from_millis(100));
        g.resume();
        std::thread::sleep(Duration::from_millis(100));
        assert!(!h.is_finished(), "still disconnected: must keep waiting");
        g.set_connected(true);
        assert_eq!(h.join().unwrap(), Ok(true));
    }
}
