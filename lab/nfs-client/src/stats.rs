//! nfsstat-style counters of one mount: requests by type, bytes moved by the server, and the
//! connection's retransmissions and reconnections.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

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
    pub waited: AtomicU64, // requests that found the gate shut
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

#[cfg(test)]
mod tests {
    use super::*;

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
