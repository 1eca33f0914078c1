//! The names the Linux NFS client gives a file it silly-renames.
//!
//! fs/nfs/unlink.c, nfs_sillyrename(): ".nfs" followed by the file id as 16 hex digits
//! (SILLYNAME_FILEID_LEN = 2 * sizeof(u64)) and a counter as 8 hex digits
//! (SILLYNAME_COUNTER_LEN = 2 * sizeof(unsigned int)). The counter is one static for the
//! whole client (every mount of the host), incremented before each try; a name that already
//! exists is skipped by trying the next counter value. The TR's own listing shows
//! `.nfs0000000025f9008400000045`: file id 0x25f90084, counter 0x45.
//!
//! Every mount of a lab host runs its own server process, so the host-wide counter lives in
//! a small file (one per host, under /run) updated under flock; without one the counter is
//! the process's own.

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::Mutex;

pub const PREFIX: &str = ".nfs";

/// `.nfs<fileid:016x><counter:08x>`, as nfs_sillyrename() prints it.
pub fn silly_name(fileid: u64, counter: u32) -> String {
    format!("{PREFIX}{fileid:016x}{counter:08x}")
}

/// (file id, counter) of a silly-renamed name, or None if it is not one.
#[cfg(test)]
pub fn parse_silly_name(name: &str) -> Option<(u64, u32)> {
    let rest = name.strip_prefix(PREFIX)?;
    if rest.len() != 24 || !rest.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) {
        return None;
    }
    Some((u64::from_str_radix(&rest[..16], 16).ok()?, u32::from_str_radix(&rest[16..], 16).ok()?))
}

/// The client-wide silly-rename counter.
pub struct Counter {
    file: Option<PathBuf>,
    local: Mutex<u32>,
}

impl Counter {
    pub fn new(file: Option<PathBuf>) -> Counter {
        Counter { file, local: Mutex::new(0) }
    }

    /// The next counter value (wrapping like an unsigned int).
    pub fn next(&self) -> u32 {
        if let Some(path) = &self.file {
            if let Ok(v) = Self::next_in_file(path) {
                return v;
            }
        }
        let mut c = self.local.lock().unwrap();
        *c = c.wrapping_add(1);
        *c
    }

    fn next_in_file(path: &PathBuf) -> std::io::Result<u32> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut f = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)?;
        // SAFETY: flock on a file descriptor we own; released when `f` closes.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut s = String::new();
        f.read_to_string(&mut s)?;
        let v = s.trim().parse::<u32>().unwrap_or(0).wrapping_add(1);
        f.seek(SeekFrom::Start(0))?;
        f.set_len(0)?;
        f.write_all(format!("{v}\n").as_bytes())?;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_the_linux_client() {
        // The TR's listing: .nfs0000000025f9008400000045
        assert_eq!(silly_name(0x25f90084, 0x45), ".nfs0000000025f9008400000045");
        assert_eq!(silly_name(u64::MAX, u32::MAX), ".nfsffffffffffffffffffffffff");
        assert_eq!(silly_name(1, 1).len(), 4 + 16 + 8);
    }

    #[test]
    fn parses_back() {
        assert_eq!(parse_silly_name(".nfs0000000025f9008400000045"), Some((0x25f90084, 0x45)));
        assert_eq!(parse_silly_name(".nfs0000000025f90084000000"), None);
        assert_eq!(parse_silly_name(".fuse_hidden0000000100000001"), None);
        assert_eq!(parse_silly_name(".nfs0000000025F9008400000045"), None);
    }

    #[test]
    fn counter_is_shared_through_its_file() {
        let dir = std::env::temp_dir().join(format!("tr4947-nfs-test-{}", std::process::id()));
        let path = dir.join("counter");
        let _ = std::fs::remove_file(&path);
        let a = Counter::new(Some(path.clone()));
        let b = Counter::new(Some(path.clone()));
        assert_eq!(a.next(), 1);
        assert_eq!(b.next(), 2);
        assert_eq!(a.next(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn counter_without_a_file_counts_in_process() {
        let c = Counter::new(None);
        assert_eq!((c.next(), c.next()), (1, 2));
    }
}
