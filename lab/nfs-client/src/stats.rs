//! nfsstat-style counters of one mount: requests by type, bytes moved by the server, and the
//! connection's retransmissions, reconnections and outages (measured, see Outages).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

macro_rules! ops {
    ($($name:ident),* $(,)?) => {
        #[allow(non_camel_case_types, dead_code)]
        #[derive(Clone, Copy)]
        pub enum Op { $($name),* }
        pub const OP_NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}

// FUSE requests, named as the kernel names them; the nfsstat shim maps them to NFS
// procedures.
ops!(
    lookup, getattr, setattr, readlink, mknod, mkdir, unlink, rmdir, symlink, rename, link, open, read, write, statfs,
    release, fsync, flush, opendir, readdir, releasedir, create, getlk, setlk, fallocate, lseek, access
);

pub struct Stats {
    ops: Vec<AtomicU64>,
    pub bytes_read: AtomicU64,
    pub bytes_written: AtomicU64,
    pub silly_renames: AtomicU64,
    pub silly_deletes: AtomicU64,
    pub waited: AtomicU64,        // requests that found the gate shut
    pub soft_timeouts: AtomicU64, // requests a soft mount failed with EIO (gate shut too long)
    pub enospc: AtomicU64,
    pub opens_passthrough: AtomicU64,
    pub opens_served: AtomicU64,
}

impl Default for Stats {
    fn default() -> Stats {
        Stats {
            ops: OP_NAMES.iter().map(|_| AtomicU64::new(0)).collect(),
            bytes_read: AtomicU64::new(0),
            bytes_written: AtomicU64::new(0),
            silly_renames: AtomicU64::new(0),
            silly_deletes: AtomicU64::new(0),
            waited: AtomicU64::new(0),
            soft_timeouts: AtomicU64::new(0),
            enospc: AtomicU64::new(0),
            opens_passthrough: AtomicU64::new(0),
            opens_served: AtomicU64::new(0),
        }
    }
}

impl Stats {
    pub fn count(&self, op: Op) {
        self.ops[op as usize].fetch_add(1, Relaxed);
    }

    pub fn ops_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        for (i, n) in OP_NAMES.iter().enumerate() {
            m.insert((*n).to_string(), self.ops[i].load(Relaxed).into());
        }
        serde_json::Value::Object(m)
    }
}

/// How long the mount was cut off from its server, measured: from the moment the reader saw
/// the connection end to the moment a new session's hello was answered. A few outages are
/// kept (a takeover then a giveback is two), with their total and count.
#[derive(Default)]
pub struct Outages {
    since: Option<Instant>,
    recent: VecDeque<u64>, // milliseconds, oldest first
    pub total_ms: u64,
    pub count: u64,
}

impl Outages {
    pub const KEPT: usize = 4;

    /// The connection is gone (a second call before it is back keeps the first time).
    pub fn lost(&mut self, at: Instant) {
        self.since.get_or_insert(at);
    }

    /// A session is back: closes the outage, if one is open, and returns its length.
    pub fn back(&mut self, at: Instant) -> Option<Duration> {
        let d = at.saturating_duration_since(self.since.take()?);
        let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        if self.recent.len() == Self::KEPT {
            self.recent.pop_front();
        }
        self.recent.push_back(ms);
        self.total_ms = self.total_ms.saturating_add(ms);
        self.count += 1;
        Some(d)
    }

    pub fn last_ms(&self) -> Option<u64> {
        self.recent.back().copied()
    }

    pub fn recent_ms(&self) -> Vec<u64> {
        self.recent.iter().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outages_run_from_loss_to_the_session_back() {
        let mut o = Outages::default();
        let t0 = Instant::now();
        assert_eq!(o.back(t0), None); // the first connection ends no outage
        assert_eq!(o.last_ms(), None);
        o.lost(t0);
        o.lost(t0 + Duration::from_millis(300)); // still the same outage
        assert_eq!(o.back(t0 + Duration::from_millis(1250)), Some(Duration::from_millis(1250)));
        assert_eq!((o.last_ms(), o.total_ms, o.count), (Some(1250), 1250, 1));
        assert_eq!(o.back(t0 + Duration::from_secs(9)), None); // nothing open: nothing counted
        for k in 1..=5 {
            let at = t0 + Duration::from_secs(10 * k);
            o.lost(at);
            o.back(at + Duration::from_millis(100 * k));
        }
        assert_eq!(o.recent_ms(), vec![200, 300, 400, 500]); // only the last few are kept
        assert_eq!((o.last_ms(), o.total_ms, o.count), (Some(500), 1250 + 1500, 6));
    }

    #[test]
    fn counts_by_name() {
        let s = Stats::default();
        s.count(Op::write);
        s.count(Op::write);
        s.count(Op::lookup);
        let j = s.ops_json();
        assert_eq!(j["write"], 2);
        assert_eq!(j["lookup"], 1);
        assert_eq!(j["read"], 0);
    }
}
