//! What can go wrong, as types.
//!
//! * [`Error`]: why a file system request failed. The kernel gets an errno, mapped from it in
//!   one place ([`Error::errno`]); the variant keeps what happened for tests and messages.
//! * [`StartError`]: why the layer could not start (printed on stderr, exit status 1).
//! * [`ProbeError`]: why FUSE passthrough cannot be used on this mount (the status's reason).

use std::io;
use std::path::PathBuf;

use fuser::Errno;
use thiserror::Error;

use crate::server::CallError;

/// Why a file system request failed.
#[derive(Debug, Error)]
pub enum Error {
    /// A system call on the backing directory failed: its own errno.
    #[error(transparent)]
    Os(#[from] io::Error),
    #[error("the mount is read-only")]
    ReadOnly,
    #[error("the volume is full (the storage stand-in's accounting)")]
    NoSpace,
    #[error("inode {0} is not known to this mount")]
    StaleInode(u64),
    #[error("file handle {0} is not open")]
    BadHandle(u64),
    #[error("a name with a NUL byte")]
    NulInName,
    #[error("locks need the storage server (the mount has none)")]
    NoLockServer,
    #[error("the lock is held by another owner")]
    LockHeld,
    #[error("the process waiting for the lock is gone")]
    LockWaiterGone,
    /// The server refused a lock, with the errno it gave (EIO if none).
    #[error("the server refused the lock (errno {0})")]
    LockRefused(i32),
    /// A call to the server that did not succeed (refused, timed out, or the mount is
    /// stopping).
    #[error("storage server: {0}")]
    Server(#[from] CallError),
    /// A soft mount gave up: the server did not answer within the major timeout.
    #[error("the server did not answer within the soft mount's major timeout")]
    SoftTimeout,
}

impl Error {
    /// The errno the kernel (and the application) gets for this error.
    pub fn errno(&self) -> Errno {
        match self {
            Error::Os(e) => Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO)),
            Error::ReadOnly => Errno::EROFS,
            Error::NoSpace => Errno::ENOSPC,
            Error::StaleInode(_) => Errno::ESTALE,
            Error::BadHandle(_) => Errno::EBADF,
            Error::NulInName => Errno::EINVAL,
            Error::NoLockServer => Errno::ENOSYS,
            Error::LockHeld => Errno::EAGAIN,
            Error::LockWaiterGone => Errno::EINTR,
            Error::LockRefused(n) => Errno::from_i32(*n),
            Error::Server(_) => Errno::EIO,
            Error::SoftTimeout => Errno::EIO,
        }
    }

    /// The error of the last failed system call (errno).
    pub fn last_os() -> Error {
        Error::Os(io::Error::last_os_error())
    }
}

/// Why the layer could not start.
#[derive(Debug, Error)]
pub enum StartError {
    /// The command line is wrong (the usage is printed after it).
    #[error("{0}")]
    Usage(String),
    #[error("backing directory {} does not exist", .0.display())]
    NoBacking(PathBuf),
    #[error("mount point {} does not exist", .0.display())]
    NoMountPoint(PathBuf),
    #[error("storage server {addr}: {source}")]
    Server { addr: String, source: io::Error },
    #[error("backing directory {}: {source}", .path.display())]
    Backing { path: PathBuf, source: io::Error },
    #[error("mount {}: {source}", .path.display())]
    Mount { path: PathBuf, source: io::Error },
    #[error("control socket {}: {source}", .path.display())]
    Control { path: PathBuf, source: io::Error },
    /// The FUSE session ended with an error after the mount was up.
    #[error("session: {0}")]
    Session(io::Error),
}

impl StartError {
    /// Whether the usage text helps (not once the mount was up).
    pub fn shows_usage(&self) -> bool {
        !matches!(self, StartError::Session(_))
    }
}

impl From<String> for StartError {
    fn from(s: String) -> StartError {
        StartError::Usage(s)
    }
}

impl From<&str> for StartError {
    fn from(s: &str) -> StartError {
        StartError::Usage(s.to_string())
    }
}

/// Why FUSE passthrough cannot be used on this mount.
#[derive(Debug, Error)]
pub enum ProbeError {
    #[error("cannot make a probe file: {0}")]
    NoProbeFile(io::Error),
    #[error("the kernel refused a backing file: {0}")]
    Refused(io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errnos_are_mapped_in_one_place() {
        let os = Error::from(io::Error::from_raw_os_error(libc::ENOTEMPTY));
        assert_eq!(os.errno().code(), libc::ENOTEMPTY);
        // An I/O error without an errno (e.g. a short write) is EIO, as fuser maps it.
        assert_eq!(Error::from(io::Error::other("x")).errno().code(), libc::EIO);
        assert_eq!(Error::ReadOnly.errno().code(), libc::EROFS);
        assert_eq!(Error::NoSpace.errno().code(), libc::ENOSPC);
        assert_eq!(Error::StaleInode(7).errno().code(), libc::ESTALE);
        assert_eq!(Error::BadHandle(7).errno().code(), libc::EBADF);
        assert_eq!(Error::LockRefused(libc::EDEADLK).errno().code(), libc::EDEADLK);
        assert_eq!(Error::Server(CallError::Stopping).errno().code(), libc::EIO);
        assert_eq!(Error::Server(CallError::TimedOut).errno().code(), libc::EIO);
        assert_eq!(Error::SoftTimeout.errno().code(), libc::EIO); // as a soft NFS mount's
    }

    #[test]
    fn start_errors_read_as_before() {
        let e = StartError::Mount { path: "/mnt/x".into(), source: io::Error::from_raw_os_error(libc::ENOENT) };
        assert!(e.to_string().starts_with("mount /mnt/x: "), "{e}");
        assert!(e.shows_usage());
        assert!(!StartError::Session(io::Error::other("gone")).shows_usage());
        assert_eq!(StartError::from("give BACKING and MOUNTPOINT").to_string(), "give BACKING and MOUNTPOINT");
    }
}
