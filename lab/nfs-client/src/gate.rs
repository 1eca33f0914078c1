//! The gate every request of a mount passes: shut while a drill pauses the mount (as a hard
//! mount blocks while its server is away) or while the mount's connection to the storage
//! stand-in is down (after its data LIF moved), open otherwise. Requests wait; none fails.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

#[derive(Default)]
struct State {
    paused: bool,
    until: Option<Instant>, // a pause with a time limit ends by itself
    disconnected: bool,
}

#[derive(Default)]
pub struct Gate {
    state: Mutex<State>,
    cv: Condvar,
}

impl Gate {
    /// Block until the gate is open; true if the caller had to wait.
    pub fn pass(&self) -> bool {
        let mut s = self.state.lock().unwrap();
        let mut waited = false;
        loop {
            if s.paused {
                if let Some(t) = s.until {
                    let now = Instant::now();
                    if now >= t {
                        s.paused = false;
                        s.until = None;
                        self.cv.notify_all();
                        continue;
                    }
                    waited = true;
                    s = self.cv.wait_timeout(s, t - now).unwrap().0;
                    continue;
                }
            } else if !s.disconnected {
                return waited;
            }
            waited = true;
            s = self.cv.wait(s).unwrap();
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

    /// (paused, seconds left of a timed pause, connected)
    pub fn status(&self) -> (bool, Option<f64>, bool) {
        let mut s = self.state.lock().unwrap();
        if let Some(t) = s.until {
            if Instant::now() >= t {
                s.paused = false;
                s.until = None;
            }
        }
        let left = s.until.map(|t| t.saturating_duration_since(Instant::now()).as_secs_f64());
        (s.paused, left, !s.disconnected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn open_gate_does_not_wait() {
        assert!(!Gate::default().pass());
    }

    #[test]
    fn timed_pause_ends_by_itself() {
        let g = Gate::default();
        g.pause(Some(0.2));
        let t = Instant::now();
        assert!(g.pass());
        assert!(t.elapsed() >= Duration::from_millis(190));
        assert!(!g.status().0);
    }

    #[test]
    fn resume_and_reconnect_release_waiters() {
        let g = Arc::new(Gate::default());
        g.pause(None);
        g.set_connected(false);
        let g2 = g.clone();
        let h = std::thread::spawn(move || g2.pass());
        std::thread::sleep(Duration::from_millis(100));
        g.resume();
        std::thread::sleep(Duration::from_millis(100));
        assert!(!h.is_finished(), "still disconnected: must keep waiting");
        g.set_connected(true);
        assert!(h.join().unwrap());
    }
}
