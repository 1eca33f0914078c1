//! The file system a lab NFS mount shows: a backing directory (the volume's data on the
//! storage side), with every namespace request answered here and, where the kernel allows
//! it, reads and writes handed to the backing file in the kernel (FUSE passthrough).
//!
//! Inodes are held as O_PATH descriptors of the backing objects (as libfuse's passthrough_ll
//! does), so renames and unlinks elsewhere never leave a stale path behind. An inode's number
//! is the backing file's (the NFS file id a client sees), except that the backing root is 1,
//! FUSE's root.
//!
//! Unlink of a file that is open through this mount:
//! * `silly-rename` (NFSv3, NFSv4.0, or a volume without preserve-unlink): renamed to
//!   `.nfs<fileid><counter>` in its directory and removed when its last handle closes, as the
//!   Linux NFS client does; a rename over an open file does the same to the file replaced.
//! * `posix-unlink` (NFSv4.1+ on a volume with preserve-unlink): removed at once; handles
//!   already open keep reading and writing the data.

use std::collections::{HashMap, HashSet};
use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fuser::{
    AccessFlags, BackingId, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, InitFlags,
    KernelConfig, LockOwner, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyLock, ReplyLseek, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};
use serde_json::json;

use crate::error::Error;
use crate::gate::{Gate, TimedOut};
use crate::names::{self, Counter};
use crate::server::{CallError, Server};
use crate::stats::{Op, Stats};

const TTL: Duration = Duration::from_secs(1);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Semantics {
    SillyRename,
    PosixUnlink,
}

impl Semantics {
    pub fn parse(s: &str) -> Option<Semantics> {
        match s {
            "silly-rename" => Some(Semantics::SillyRename),
            "posix-unlink" => Some(Semantics::PosixUnlink),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Semantics::SillyRename => "silly-rename",
            Semantics::PosixUnlink => "posix-unlink",
        }
    }
}

/// How the mount moves data: through passthrough, or served by this process (and why).
pub struct Mode {
    pub passthrough: bool,
    pub reason: String, // why not, when not
}

/// What the control socket sees of a mount.
pub struct Shared {
    pub stats: Stats,
    pub gate: Arc<Gate>,
    pub server: Option<Arc<Server>>,
    pub semantics: Semantics,
    pub mode: Mutex<Mode>,
    /// A soft mount's major timeout: how long a request waits at a shut gate before EIO.
    pub soft: Option<Duration>,
    passthrough: AtomicBool,
    space: Mutex<Space>,
    pub locks_held: Mutex<HashSet<(u64, u64)>>, // (file id, lock owner) with a lock on the server
}

impl Shared {
    pub fn new(
        semantics: Semantics,
        gate: Arc<Gate>,
        server: Option<Arc<Server>>,
        mode: Mode,
        soft: Option<Duration>,
    ) -> Shared {
        Shared {
            soft,
            stats: Stats::default(),
            gate,
            server,
            semantics,
            passthrough: AtomicBool::new(mode.passthrough),
            mode: Mutex::new(mode),
            space: Mutex::new(Space::default()),
            locks_held: Mutex::new(HashSet::new()),
        }
    }

    pub fn set_mode(&self, passthrough: bool, reason: &str) {
        self.passthrough.store(passthrough, Relaxed);
        let mut m = self.mode.lock().unwrap();
        m.passthrough = passthrough;
        m.reason = reason.to_string();
    }

    pub fn passthrough(&self) -> bool {
        self.passthrough.load(Relaxed)
    }

    /// The volume's (size, used) as the storage stand-in accounts it, fetched now.
    pub fn space_now(&self) -> Option<(u64, u64)> {
        self.refresh()
    }

    /// The last accounting seen (size, used, bytes written since), without asking.
    pub fn space_seen(&self) -> Option<(u64, u64, u64)> {
        let sp = self.space.lock().unwrap();
        sp.at.map(|_| (sp.size, sp.used, sp.since()))
    }

    /// Ask the stand-in for the volume's space. The call waits out a disconnection (a LIF
    /// move, an outage), so the space lock is not held across it: status and statfs read or
    /// ask meanwhile. What this mount writes while the question is out is counted on top of
    /// the answer, as it was when writes waited for the lock.
    fn refresh(&self) -> Option<(u64, u64)> {
        let srv = self.server.as_ref()?;
        let asked_at = self.space.lock().unwrap().written;
        let v = srv.call(json!({"op": "space"})).ok()?;
        let (size, used) = (v["size"].as_u64().unwrap_or(u64::MAX), v["used"].as_u64().unwrap_or(0));
        let mut sp = self.space.lock().unwrap();
        sp.size = size;
        sp.used = used;
        sp.at = Some(Instant::now());
        sp.base = asked_at;
        Some((size, used))
    }

    /// How many of `want` new bytes the volume still takes (the stand-in's accounting,
    /// at most 1 s old, plus what this mount wrote since; asked again whenever a write does
    /// not fit, as the server decides every write on a real mount).
    fn room(&self, want: u64) -> u64 {
        if self.server.is_none() {
            return want;
        }
        let stale = self.space.lock().unwrap().at.is_none_or(|t| t.elapsed() > Duration::from_secs(1));
        if stale {
            self.refresh();
        }
        if want > self.space.lock().unwrap().avail() {
            self.refresh();
        }
        want.min(self.space.lock().unwrap().avail())
    }

    fn wrote(&self, grew: u64) {
        if grew > 0 {
            self.space.lock().unwrap().written += grew;
        }
    }
}

#[derive(Default)]
struct Space {
    size: u64,
    used: u64,
    at: Option<Instant>,
    written: u64, // bytes this mount grew files by, all told
    base: u64,    // `written` when the last answer's question was sent
}

impl Space {
    /// Bytes written since the question of the last answer was sent.
    fn since(&self) -> u64 {
        self.written.saturating_sub(self.base)
    }

    fn avail(&self) -> u64 {
        self.size.saturating_sub(self.used).saturating_sub(self.since())
    }
}

struct Inode {
    fd: Arc<OwnedFd>, // O_PATH
    backing_ino: u64,
    nlookup: u64,
    opens: u32,
    silly: Option<(Arc<OwnedFd>, CString)>, // (directory, .nfs name) to remove on last close
    backing: Weak<BackingId>,
}

struct Handle {
    file: File,
    _backing: Option<Arc<BackingId>>, // keeps the kernel's backing file while open
}

type DirEntries = Arc<Vec<(u64, FileType, OsString)>>;

#[derive(Default)]
struct Inner {
    inodes: HashMap<u64, Inode>,
    handles: HashMap<u64, Arc<Handle>>,
    dirs: HashMap<u64, DirEntries>,
    next_fh: u64,
}

pub struct Fs {
    sh: Arc<Shared>,
    inner: Mutex<Inner>,
    root_ino: u64, // the backing root's st_ino
    counter: Counter,
    read_only: bool,
    want_passthrough: bool,
    uid: u32,
}

fn cstr(name: &OsStr) -> Result<CString, Error> {
    CString::new(name.as_bytes()).map_err(|_| Error::NulInName)
}

fn last() -> Error {
    Error::last_os()
}

fn check(r: libc::c_int) -> Result<libc::c_int, Error> {
    if r < 0 {
        Err(last())
    } else {
        Ok(r)
    }
}

fn proc_path(fd: RawFd) -> CString {
    CString::new(format!("/proc/self/fd/{fd}")).unwrap()
}

fn fstat(fd: RawFd) -> Result<libc::stat, Error> {
    // SAFETY: st is fully written by a successful fstatat; "" with AT_EMPTY_PATH is the fd.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        check(libc::fstatat(fd, c"".as_ptr(), &mut st, libc::AT_EMPTY_PATH | libc::AT_SYMLINK_NOFOLLOW))?;
        Ok(st)
    }
}

fn fstatat(dir: RawFd, name: &CString) -> Result<libc::stat, Error> {
    // SAFETY: as above.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        check(libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW))?;
        Ok(st)
    }
}

fn openat(dir: RawFd, name: &CString, flags: i32, mode: u32) -> Result<OwnedFd, Error> {
    // SAFETY: a successful openat returns a new descriptor we own.
    let fd = check(unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC, mode) })?;
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn kind_of(mode: u32) -> FileType {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => FileType::Directory,
        libc::S_IFLNK => FileType::Symlink,
        libc::S_IFIFO => FileType::NamedPipe,
        libc::S_IFSOCK => FileType::Socket,
        libc::S_IFCHR => FileType::CharDevice,
        libc::S_IFBLK => FileType::BlockDevice,
        _ => FileType::RegularFile,
    }
}

fn time(sec: i64, nsec: i64) -> SystemTime {
    if sec >= 0 {
        UNIX_EPOCH + Duration::new(sec as u64, nsec as u32)
    } else {
        UNIX_EPOCH - Duration::from_secs(sec.unsigned_abs())
    }
}

fn timespec(t: Option<TimeOrNow>) -> libc::timespec {
    match t {
        None => libc::timespec { tv_sec: 0, tv_nsec: libc::UTIME_OMIT },
        Some(TimeOrNow::Now) => libc::timespec { tv_sec: 0, tv_nsec: libc::UTIME_NOW },
        Some(TimeOrNow::SpecificTime(t)) => {
            let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
            libc::timespec { tv_sec: d.as_secs() as i64, tv_nsec: d.subsec_nanos() as i64 }
        }
    }
}

impl Fs {
    pub fn new(
        backing: &std::path::Path,
        sh: Arc<Shared>,
        counter: Counter,
        read_only: bool,
        want_passthrough: bool,
    ) -> io::Result<Fs> {
        let c = CString::new(backing.as_os_str().as_bytes())?;
        // SAFETY: open returns a descriptor we own.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let st = fstat(fd.as_raw_fd()).map_err(|_| io::Error::last_os_error())?;
        let mut inner = Inner { next_fh: 1, ..Default::default() };
        inner.inodes.insert(
            1,
            Inode { fd: Arc::new(fd), backing_ino: st.st_ino, nlookup: 1, opens: 0, silly: None, backing: Weak::new() },
        );
        Ok(Fs {
            sh,
            inner: Mutex::new(inner),
            root_ino: st.st_ino,
            counter,
            read_only,
            want_passthrough,
            uid: unsafe { libc::geteuid() },
        })
    }

    /// The inode number this mount shows for a backing inode (root swapped with 1).
    fn ino_of(&self, st_ino: u64) -> u64 {
        if st_ino == self.root_ino {
            1
        } else if st_ino == 1 {
            self.root_ino
        } else {
            st_ino
        }
    }

    fn attr(&self, st: &libc::stat) -> FileAttr {
        FileAttr {
            ino: INodeNo(self.ino_of(st.st_ino)),
            size: st.st_size as u64,
            blocks: st.st_blocks as u64,
            atime: time(st.st_atime, st.st_atime_nsec),
            mtime: time(st.st_mtime, st.st_mtime_nsec),
            ctime: time(st.st_ctime, st.st_ctime_nsec),
            crtime: UNIX_EPOCH,
            kind: kind_of(st.st_mode),
            perm: (st.st_mode & 0o7777) as u16,
            nlink: st.st_nlink as u32,
            uid: st.st_uid,
            gid: st.st_gid,
            rdev: st.st_rdev as u32,
            blksize: st.st_blksize as u32,
            flags: 0,
        }
    }

    fn ifd(&self, ino: INodeNo) -> Result<Arc<OwnedFd>, Error> {
        let inner = self.inner.lock().unwrap();
        inner.inodes.get(&ino.0).map(|i| i.fd.clone()).ok_or(Error::StaleInode(ino.0))
    }

    fn handle(&self, fh: FileHandle) -> Result<Arc<Handle>, Error> {
        self.inner.lock().unwrap().handles.get(&fh.0).cloned().ok_or(Error::BadHandle(fh.0))
    }

    /// Look `name` up in `dir` and count one more kernel reference to its inode.
    fn lookup_entry(&self, dir: RawFd, name: &CString) -> Result<FileAttr, Error> {
        let fd = openat(dir, name, libc::O_PATH | libc::O_NOFOLLOW, 0)?;
        let st = fstat(fd.as_raw_fd())?;
        let ino = self.ino_of(st.st_ino);
        let mut inner = self.inner.lock().unwrap();
        inner.inodes.entry(ino).and_modify(|i| i.nlookup += 1).or_insert_with(|| Inode {
            fd: Arc::new(fd),
            backing_ino: st.st_ino,
            nlookup: 1,
            opens: 0,
            silly: None,
            backing: Weak::new(),
        });
        Ok(self.attr(&st))
    }

    /// Entry points are counted and pass the gate (pause, disconnection, silent server): a
    /// hard mount waits as long as it takes, a soft one fails the request with EIO once its
    /// major timeout has passed.
    fn enter(&self, op: Op) -> Result<(), Error> {
        self.sh.stats.count(op);
        match self.sh.gate.pass_within(self.sh.soft) {
            Ok(waited) => {
                if waited {
                    self.sh.stats.waited.fetch_add(1, Relaxed);
                }
                Ok(())
            }
            Err(TimedOut) => {
                self.sh.stats.waited.fetch_add(1, Relaxed);
                self.sh.stats.soft_timeouts.fetch_add(1, Relaxed);
                Err(Error::SoftTimeout)
            }
        }
    }

    fn writable(&self) -> Result<(), Error> {
        if self.read_only {
            Err(Error::ReadOnly)
        } else {
            Ok(())
        }
    }

    fn not_full(&self) -> Result<(), Error> {
        if self.sh.room(1) == 0 {
            self.sh.stats.enospc.fetch_add(1, Relaxed);
            return Err(Error::NoSpace);
        }
        Ok(())
    }

    /// New objects belong to the caller, as on an NFS export without root squashing.
    fn own(&self, dir: RawFd, name: &CString, req: &Request) {
        if self.uid == 0 && (req.uid() != 0 || req.gid() != 0) {
            // SAFETY: plain syscall on a valid descriptor and name.
            unsafe { libc::fchownat(dir, name.as_ptr(), req.uid(), req.gid(), libc::AT_SYMLINK_NOFOLLOW) };
        }
    }

    /// The number of the inode `name` in `dir` names, if this mount has it open.
    fn open_inode_at(&self, dir: RawFd, name: &CString) -> Option<u64> {
        let st = fstatat(dir, name).ok()?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return None;
        }
        let ino = self.ino_of(st.st_ino);
        let inner = self.inner.lock().unwrap();
        inner.inodes.get(&ino).filter(|i| i.opens > 0).map(|_| ino)
    }

    /// nfs_sillyrename(): rename an open file to .nfs<fileid><counter> in its directory.
    /// False (nothing renamed) when its last handle closed since the caller found it open.
    ///
    /// The open count is checked again and the rename done under the inode table's lock,
    /// the lock release takes to count a close and to take the .nfs name to remove: a last
    /// close comes either before (then nothing is renamed; the caller unlinks) or after the
    /// .nfs name is recorded (then that close removes it), never in between, where it would
    /// leave the .nfs file behind for good.
    fn silly_rename(&self, dir: &Arc<OwnedFd>, name: &CString, ino: u64) -> Result<bool, Error> {
        let silly = loop {
            let n = CString::new(names::silly_name(ino, self.counter.next())).unwrap();
            if fstatat(dir.as_raw_fd(), &n).is_err() {
                break n;
            }
        };
        let dup = Arc::new(dir.try_clone()?);
        let mut inner = self.inner.lock().unwrap();
        let Some(i) = inner.inodes.get_mut(&ino).filter(|i| i.opens > 0) else { return Ok(false) };
        // SAFETY: renameat on valid descriptors and names.
        check(unsafe { libc::renameat(dir.as_raw_fd(), name.as_ptr(), dir.as_raw_fd(), silly.as_ptr()) })?;
        i.silly = Some((dup, silly));
        drop(inner);
        self.sh.stats.silly_renames.fetch_add(1, Relaxed);
        Ok(true)
    }

    /// Open a backing file for a new handle and answer with passthrough or served I/O.
    fn new_handle(
        &self,
        ino: u64,
        file: File,
        reply_backing: impl FnOnce(&File) -> io::Result<BackingId>,
    ) -> (FileHandle, Option<Arc<BackingId>>) {
        let mut backing = None;
        if self.sh.passthrough() {
            let existing = self.inner.lock().unwrap().inodes.get(&ino).and_then(|i| i.backing.upgrade());
            backing = match existing {
                Some(b) => Some(b),
                None => match reply_backing(&file) {
                    Ok(b) => {
                        let b = Arc::new(b);
                        if let Some(i) = self.inner.lock().unwrap().inodes.get_mut(&ino) {
                            i.backing = Arc::downgrade(&b);
                        }
                        Some(b)
                    }
                    Err(e) => {
                        // The kernel refused this backing file: serve this mount's data from
                        // here from now on, and say so.
                        self.sh.set_mode(false, &format!("passthrough refused at open: {e}"));
                        None
                    }
                },
            };
        }
        let counter = if backing.is_some() { &self.sh.stats.opens_passthrough } else { &self.sh.stats.opens_served };
        counter.fetch_add(1, Relaxed);
        let mut inner = self.inner.lock().unwrap();
        let fh = inner.next_fh;
        inner.next_fh += 1;
        if let Some(i) = inner.inodes.get_mut(&ino) {
            i.opens += 1;
        }
        inner.handles.insert(fh, Arc::new(Handle { file, _backing: backing.clone() }));
        (FileHandle(fh), backing)
    }

    fn open_flags(&self, flags: i32) -> i32 {
        let mut f = flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_NOCTTY);
        if !self.sh.passthrough() {
            // Served I/O writes at the offsets the kernel sends, and buffers need no alignment.
            f &= !(libc::O_APPEND | libc::O_DIRECT);
        }
        f
    }

    /// Drop POSIX locks of `owner` on a file from the server (close, or flock release).
    fn unlock_owner(&self, file: u64, owner: u64) {
        let held = self.sh.locks_held.lock().unwrap().remove(&(file, owner));
        if held {
            if let Some(srv) = &self.sh.server {
                let _ = srv.call(json!({"op": "unlock", "file": file, "owner": owner,
                                        "start": 0, "end": u64::MAX}));
            }
        }
    }

    /// unlink: silly-renamed while open through this mount (silly-rename), removed otherwise.
    fn remove(&self, parent: INodeNo, name: &OsStr) -> Result<(), Error> {
        self.writable()?;
        let dir = self.ifd(parent)?;
        let n = cstr(name)?;
        if self.sh.semantics == Semantics::SillyRename {
            if let Some(ino) = self.open_inode_at(dir.as_raw_fd(), &n) {
                window();
                if self.silly_rename(&dir, &n, ino)? {
                    return Ok(());
                }
            }
        }
        // SAFETY: plain syscall.
        check(unsafe { libc::unlinkat(dir.as_raw_fd(), n.as_ptr(), 0) }).map(|_| ())
    }

    /// release: drop a handle; the last close of a silly-renamed file removes its .nfs name.
    fn close(&self, ino: INodeNo, fh: FileHandle) {
        let silly = {
            let mut inner = self.inner.lock().unwrap();
            inner.handles.remove(&fh.0);
            let mut silly = None;
            let mut gone = false;
            if let Some(i) = inner.inodes.get_mut(&ino.0) {
                i.opens = i.opens.saturating_sub(1);
                if i.opens == 0 {
                    silly = i.silly.take();
                    gone = i.nlookup == 0;
                }
            }
            if gone {
                inner.inodes.remove(&ino.0);
            }
            silly
        };
        if let Some((dir, name)) = silly {
            // The last close: the client removes its .nfs file.
            // SAFETY: plain syscall.
            if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) } == 0 {
                self.sh.stats.silly_deletes.fetch_add(1, Relaxed);
            }
        }
    }

    fn backing_ino(&self, ino: INodeNo) -> u64 {
        let inner = self.inner.lock().unwrap();
        inner.inodes.get(&ino.0).map(|i| i.backing_ino).unwrap_or(ino.0)
    }
}

// Tests widen the window between unlink's open check and its rename (see the race test).
#[cfg(test)]
thread_local! {
    static WINDOW: std::cell::RefCell<Option<Box<dyn FnOnce()>>> = const { std::cell::RefCell::new(None) };
}

fn window() {
    #[cfg(test)]
    if let Some(f) = WINDOW.with(|w| w.borrow_mut().take()) {
        f();
    }
}

/// fuser's replies, each of which can answer an error.
trait Fail {
    /// Answer `e` as its errno (mapped in one place: Error::errno).
    fn fail(self, e: Error);
}

macro_rules! fail {
    ($($t:ty),* $(,)?) => {
        $(impl Fail for $t {
            fn fail(self, e: Error) {
                self.error(e.errno())
            }
        })*
    };
}

fail!(
    ReplyAttr,
    ReplyCreate,
    ReplyData,
    ReplyDirectory,
    ReplyEmpty,
    ReplyEntry,
    ReplyLock,
    ReplyLseek,
    ReplyOpen,
    ReplyStatfs,
    ReplyWrite
);

/// Answer a request with its outcome: the value through `ok`, an error as its errno.
/// Pass the gate, or answer the request with the gate's error (a soft mount's EIO).
macro_rules! enter {
    ($fs:ident, $op:expr, $reply:ident) => {
        if let Err(e) = $fs.enter($op) {
            return $reply.fail(e);
        }
    };
}

fn answer<R: Fail, T>(reply: R, r: Result<T, Error>, ok: impl FnOnce(R, T)) {
    match r {
        Ok(v) => ok(reply, v),
        Err(e) => reply.fail(e),
    }
}

fn lock_type(typ: i32) -> &'static str {
    if typ == libc::F_RDLCK {
        "r"
    } else {
        "w"
    }
}

impl Filesystem for Fs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> io::Result<()> {
        if self.want_passthrough {
            match config.add_capabilities(InitFlags::FUSE_PASSTHROUGH) {
                Ok(()) => {
                    // 2: backing files may themselves be on a stacked file system (overlayfs).
                    let _ = config.set_max_stack_depth(2);
                }
                Err(_) => self.sh.set_mode(false, "the kernel offers no FUSE passthrough"),
            }
        }
        if self.sh.server.is_some() {
            // Byte-range locks (and flock, which the Linux NFS client also sends to the
            // server as whole-file locks) are held by the server.
            let _ = config.add_capabilities(InitFlags::FUSE_POSIX_LOCKS | InitFlags::FUSE_FLOCK_LOCKS);
        }
        let _ = config.add_capabilities(InitFlags::FUSE_PARALLEL_DIROPS);
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        enter!(self, Op::lookup, reply);
        let r = (|| {
            let dir = self.ifd(parent)?;
            self.lookup_entry(dir.as_raw_fd(), &cstr(name)?)
        })();
        answer(reply, r, |reply, a| reply.entry(&TTL, &a, Generation(0)));
    }

    fn forget(&self, _req: &Request, ino: INodeNo, nlookup: u64) {
        let mut inner = self.inner.lock().unwrap();
        if ino.0 == 1 {
            return;
        }
        let gone = match inner.inodes.get_mut(&ino.0) {
            Some(i) => {
                i.nlookup = i.nlookup.saturating_sub(nlookup);
                i.nlookup == 0 && i.opens == 0
            }
            None => false,
        };
        if gone {
            inner.inodes.remove(&ino.0);
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        enter!(self, Op::getattr, reply);
        let r = (|| {
            if let Some(h) = fh.and_then(|fh| self.handle(fh).ok()) {
                return fstat(h.file.as_raw_fd());
            }
            fstat(self.ifd(ino)?.as_raw_fd())
        })();
        answer(reply, r, |reply, st| reply.attr(&TTL, &self.attr(&st)));
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        enter!(self, Op::setattr, reply);
        let r = (|| {
            self.writable()?;
            let fd = self.ifd(ino)?;
            let path = proc_path(fd.as_raw_fd());
            let is_link = fstat(fd.as_raw_fd())?.st_mode & libc::S_IFMT == libc::S_IFLNK;
            // SAFETY: syscalls on valid descriptors/paths.
            unsafe {
                if let Some(m) = mode {
                    if !is_link {
                        check(libc::chmod(path.as_ptr(), m & 0o7777))?;
                    }
                }
                if uid.is_some() || gid.is_some() {
                    check(libc::fchownat(
                        fd.as_raw_fd(),
                        c"".as_ptr(),
                        uid.unwrap_or(u32::MAX),
                        gid.unwrap_or(u32::MAX),
                        libc::AT_EMPTY_PATH,
                    ))?;
                }
                if let Some(sz) = size {
                    match fh.and_then(|fh| self.handle(fh).ok()) {
                        Some(h) => check(libc::ftruncate(h.file.as_raw_fd(), sz as i64))?,
                        None => check(libc::truncate(path.as_ptr(), sz as i64))?,
                    };
                }
                if (atime.is_some() || mtime.is_some()) && !is_link {
                    let ts = [timespec(atime), timespec(mtime)];
                    check(libc::utimensat(libc::AT_FDCWD, path.as_ptr(), ts.as_ptr(), 0))?;
                }
            }
            fstat(fd.as_raw_fd())
        })();
        answer(reply, r, |reply, st| reply.attr(&TTL, &self.attr(&st)));
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        enter!(self, Op::readlink, reply);
        let r = (|| {
            let fd = self.ifd(ino)?;
            let mut buf = vec![0u8; libc::PATH_MAX as usize];
            // SAFETY: buf is writable for its length.
            let n = unsafe { libc::readlinkat(fd.as_raw_fd(), c"".as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                return Err(last());
            }
            buf.truncate(n as usize);
            Ok(buf)
        })();
        answer(reply, r, |reply, b| reply.data(&b));
    }

    fn mknod(&self, req: &Request, parent: INodeNo, name: &OsStr, mode: u32, umask: u32, rdev: u32, reply: ReplyEntry) {
        enter!(self, Op::mknod, reply);
        let r = (|| {
            self.writable()?;
            self.not_full()?;
            let dir = self.ifd(parent)?;
            let n = cstr(name)?;
            // SAFETY: plain syscall.
            check(unsafe { libc::mknodat(dir.as_raw_fd(), n.as_ptr(), mode & !umask, rdev as u64) })?;
            self.own(dir.as_raw_fd(), &n, req);
            self.lookup_entry(dir.as_raw_fd(), &n)
        })();
        answer(reply, r, |reply, a| reply.entry(&TTL, &a, Generation(0)));
    }

    fn mkdir(&self, req: &Request, parent: INodeNo, name: &OsStr, mode: u32, umask: u32, reply: ReplyEntry) {
        enter!(self, Op::mkdir, reply);
        let r = (|| {
            self.writable()?;
            self.not_full()?;
            let dir = self.ifd(parent)?;
            let n = cstr(name)?;
            // SAFETY: plain syscall.
            check(unsafe { libc::mkdirat(dir.as_raw_fd(), n.as_ptr(), mode & !umask) })?;
            self.own(dir.as_raw_fd(), &n, req);
            self.lookup_entry(dir.as_raw_fd(), &n)
        })();
        answer(reply, r, |reply, a| reply.entry(&TTL, &a, Generation(0)));
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        enter!(self, Op::unlink, reply);
        answer(reply, self.remove(parent, name), |reply, ()| reply.ok());
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        enter!(self, Op::rmdir, reply);
        let r = (|| {
            self.writable()?;
            let dir = self.ifd(parent)?;
            let n = cstr(name)?;
            // A directory still holding a silly-renamed file is not empty: ENOTEMPTY.
            // SAFETY: plain syscall.
            check(unsafe { libc::unlinkat(dir.as_raw_fd(), n.as_ptr(), libc::AT_REMOVEDIR) }).map(|_| ())
        })();
        answer(reply, r, |reply, ()| reply.ok());
    }

    fn symlink(&self, req: &Request, parent: INodeNo, link_name: &OsStr, target: &std::path::Path, reply: ReplyEntry) {
        enter!(self, Op::symlink, reply);
        let r = (|| {
            self.writable()?;
            self.not_full()?;
            let dir = self.ifd(parent)?;
            let n = cstr(link_name)?;
            let t = cstr(target.as_os_str())?;
            // SAFETY: plain syscall.
            check(unsafe { libc::symlinkat(t.as_ptr(), dir.as_raw_fd(), n.as_ptr()) })?;
            self.own(dir.as_raw_fd(), &n, req);
            self.lookup_entry(dir.as_raw_fd(), &n)
        })();
        answer(reply, r, |reply, a| reply.entry(&TTL, &a, Generation(0)));
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        enter!(self, Op::rename, reply);
        let r = (|| {
            self.writable()?;
            let dir = self.ifd(parent)?;
            let ndir = self.ifd(newparent)?;
            let (n, nn) = (cstr(name)?, cstr(newname)?);
            if self.sh.semantics == Semantics::SillyRename && flags.bits() == 0 {
                // nfs_rename(): a target still open is silly-renamed first, so the handles
                // on it keep their data until they close.
                if let Some(ino) = self.open_inode_at(ndir.as_raw_fd(), &nn) {
                    let src = fstatat(dir.as_raw_fd(), &n)?;
                    if self.ino_of(src.st_ino) != ino {
                        self.silly_rename(&ndir, &nn, ino)?; // false: closed since; replaced below
                    }
                }
            }
            // SAFETY: plain syscall.
            check(unsafe { libc::renameat2(dir.as_raw_fd(), n.as_ptr(), ndir.as_raw_fd(), nn.as_ptr(), flags.bits()) })
                .map(|_| ())
        })();
        answer(reply, r, |reply, ()| reply.ok());
    }

    fn link(&self, _req: &Request, ino: INodeNo, newparent: INodeNo, newname: &OsStr, reply: ReplyEntry) {
        enter!(self, Op::link, reply);
        let r = (|| {
            self.writable()?;
            let fd = self.ifd(ino)?;
            let ndir = self.ifd(newparent)?;
            let nn = cstr(newname)?;
            let p = proc_path(fd.as_raw_fd());
            // SAFETY: plain syscall.
            check(unsafe {
                libc::linkat(libc::AT_FDCWD, p.as_ptr(), ndir.as_raw_fd(), nn.as_ptr(), libc::AT_SYMLINK_FOLLOW)
            })?;
            self.lookup_entry(ndir.as_raw_fd(), &nn)
        })();
        answer(reply, r, |reply, a| reply.entry(&TTL, &a, Generation(0)));
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        enter!(self, Op::open, reply);
        let r = (|| {
            let acc = flags.0 & libc::O_ACCMODE;
            if acc != libc::O_RDONLY || flags.0 & libc::O_TRUNC != 0 {
                self.writable()?;
            }
            let fd = self.ifd(ino)?;
            let p = proc_path(fd.as_raw_fd());
            // SAFETY: open returns a descriptor we own.
            let raw = check(unsafe { libc::open(p.as_ptr(), self.open_flags(flags.0) | libc::O_CLOEXEC) })?;
            Ok(unsafe { File::from_raw_fd(raw) })
        })();
        answer(reply, r, |reply, file| {
            let (fh, backing) = self.new_handle(ino.0, file, |f| reply.open_backing(f.as_fd()));
            match backing {
                Some(b) => reply.opened_passthrough(fh, FopenFlags::empty(), &b),
                None => reply.opened(fh, FopenFlags::empty()),
            }
        });
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        enter!(self, Op::read, reply);
        let r = (|| {
            let h = self.handle(fh)?;
            let mut buf = vec![0u8; size as usize];
            let mut n = 0;
            while n < buf.len() {
                match h.file.read_at(&mut buf[n..], offset + n as u64) {
                    Ok(0) => break,
                    Ok(k) => n += k,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e.into()),
                }
            }
            buf.truncate(n);
            Ok(buf)
        })();
        answer(reply, r, |reply, b| {
            self.sh.stats.bytes_read.fetch_add(b.len() as u64, Relaxed);
            reply.data(&b)
        });
    }

    fn write(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        enter!(self, Op::write, reply);
        let r = (|| {
            self.writable()?;
            let h = self.handle(fh)?;
            let size = fstat(h.file.as_raw_fd())?.st_size as u64;
            let grow = (offset + data.len() as u64).saturating_sub(size);
            let mut len = data.len();
            if grow > 0 {
                // As ONTAP does when a write does not fit: as much as fits, then ENOSPC.
                let room = self.sh.room(grow);
                if room < grow {
                    len -= (grow - room) as usize;
                    if len == 0 {
                        self.sh.stats.enospc.fetch_add(1, Relaxed);
                        return Err(Error::NoSpace);
                    }
                }
            }
            let n = h.file.write_at(&data[..len], offset)?;
            self.sh.wrote((offset + n as u64).saturating_sub(size));
            Ok(n)
        })();
        answer(reply, r, |reply, n| {
            self.sh.stats.bytes_written.fetch_add(n as u64, Relaxed);
            reply.written(n as u32)
        });
    }

    fn flush(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, lock_owner: LockOwner, reply: ReplyEmpty) {
        enter!(self, Op::flush, reply);
        // close(): a process's POSIX locks on the file go (NFS: LOCKU on close).
        self.unlock_owner(self.backing_ino(ino), lock_owner.0);
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        let _ = self.enter(Op::release); // closed here whatever the server says
        if let Some(o) = lock_owner {
            self.unlock_owner(self.backing_ino(ino), o.0); // flock() locks go with the file
        }
        self.close(ino, fh);
        reply.ok();
    }

    fn fsync(&self, _req: &Request, _ino: INodeNo, fh: FileHandle, datasync: bool, reply: ReplyEmpty) {
        enter!(self, Op::fsync, reply);
        let r = self.handle(fh).and_then(|h| {
            let res = if datasync { h.file.sync_data() } else { h.file.sync_all() };
            res.map_err(Error::from)
        });
        answer(reply, r, |reply, ()| reply.ok());
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        enter!(self, Op::opendir, reply);
        let r = (|| {
            let fd = self.ifd(ino)?;
            let d = openat(fd.as_raw_fd(), &CString::new(".").unwrap(), libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
            let mut out = Vec::new();
            // SAFETY: fdopendir takes ownership of the descriptor; closedir releases both.
            unsafe {
                let dp = libc::fdopendir(d.as_raw_fd());
                if dp.is_null() {
                    return Err(last());
                }
                std::mem::forget(d);
                loop {
                    let e = libc::readdir64(dp);
                    if e.is_null() {
                        break;
                    }
                    let name = std::ffi::CStr::from_ptr((*e).d_name.as_ptr()).to_bytes().to_vec();
                    let kind = match (*e).d_type {
                        libc::DT_DIR => FileType::Directory,
                        libc::DT_LNK => FileType::Symlink,
                        libc::DT_FIFO => FileType::NamedPipe,
                        libc::DT_SOCK => FileType::Socket,
                        libc::DT_CHR => FileType::CharDevice,
                        libc::DT_BLK => FileType::BlockDevice,
                        _ => FileType::RegularFile,
                    };
                    out.push((self.ino_of((*e).d_ino), kind, OsString::from_vec(name)));
                }
                libc::closedir(dp);
            }
            let mut inner = self.inner.lock().unwrap();
            let fh = inner.next_fh;
            inner.next_fh += 1;
            inner.dirs.insert(fh, Arc::new(out));
            Ok(FileHandle(fh))
        })();
        answer(reply, r, |reply, fh| reply.opened(fh, FopenFlags::empty()));
    }

    fn readdir(&self, _req: &Request, _ino: INodeNo, fh: FileHandle, offset: u64, mut reply: ReplyDirectory) {
        enter!(self, Op::readdir, reply);
        let entries = self.inner.lock().unwrap().dirs.get(&fh.0).cloned();
        let Some(entries) = entries else { return reply.fail(Error::BadHandle(fh.0)) };
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(*ino), (i + 1) as u64, *kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn releasedir(&self, _req: &Request, _ino: INodeNo, fh: FileHandle, _flags: OpenFlags, reply: ReplyEmpty) {
        let _ = self.enter(Op::releasedir); // closed here whatever the server says
        self.inner.lock().unwrap().dirs.remove(&fh.0);
        reply.ok();
    }

    fn fsyncdir(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        enter!(self, Op::statfs, reply);
        const B: u64 = 4096;
        if let Some((size, used)) = self.sh.space_now() {
            let free = size.saturating_sub(used) / B;
            return reply.statfs(size / B, free, free, 0, 0, B as u32, 255, B as u32);
        }
        let r = (|| {
            let fd = self.ifd(INodeNo(1))?;
            // SAFETY: st is fully written by a successful fstatvfs.
            let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
            let d = openat(fd.as_raw_fd(), &CString::new(".").unwrap(), libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
            check(unsafe { libc::fstatvfs(d.as_raw_fd(), &mut st) })?;
            Ok(st)
        })();
        answer(reply, r, |reply, st| {
            reply.statfs(
                st.f_blocks,
                st.f_bfree,
                st.f_bavail,
                st.f_files,
                st.f_ffree,
                st.f_bsize as u32,
                255,
                st.f_frsize as u32,
            )
        });
    }

    fn access(&self, _req: &Request, _ino: INodeNo, _mask: AccessFlags, reply: ReplyEmpty) {
        enter!(self, Op::access, reply);
        reply.ok(); // default_permissions: the kernel checks modes itself
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        enter!(self, Op::create, reply);
        let r = (|| {
            self.writable()?;
            self.not_full()?;
            let dir = self.ifd(parent)?;
            let n = cstr(name)?;
            let keep = flags & (libc::O_EXCL | libc::O_TRUNC);
            let fd = openat(dir.as_raw_fd(), &n, self.open_flags(flags) | libc::O_CREAT | keep, mode & !umask)?;
            self.own(dir.as_raw_fd(), &n, req);
            let a = self.lookup_entry(dir.as_raw_fd(), &n)?;
            Ok((File::from(fd), a))
        })();
        answer(reply, r, |reply, (file, a)| {
            let (fh, backing) = self.new_handle(a.ino.0, file, |f| reply.open_backing(f.as_fd()));
            match backing {
                Some(b) => reply.created_passthrough(&TTL, &a, Generation(0), fh, FopenFlags::empty(), &b),
                None => reply.created(&TTL, &a, Generation(0), fh, FopenFlags::empty()),
            }
        });
    }

    fn getlk(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        lock_owner: LockOwner,
        start: u64,
        end: u64,
        typ: i32,
        _pid: u32,
        reply: ReplyLock,
    ) {
        enter!(self, Op::getlk, reply);
        let Some(srv) = &self.sh.server else { return reply.fail(Error::NoLockServer) };
        let req = json!({"op": "testlk", "file": self.backing_ino(ino), "owner": lock_owner.0,
                         "start": start, "end": end, "type": lock_type(typ)});
        answer(reply, srv.call(req).map_err(Error::from), |reply, v| {
            let c = &v["conflict"];
            if !c.is_object() {
                return reply.locked(start, end, libc::F_UNLCK, 0);
            }
            let t = if c["type"] == "r" { libc::F_RDLCK } else { libc::F_WRLCK };
            reply.locked(
                c["start"].as_u64().unwrap_or(0),
                c["end"].as_u64().unwrap_or(u64::MAX),
                t,
                c["pid"].as_u64().unwrap_or(0) as u32,
            )
        });
    }

    fn setlk(
        &self,
        req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        lock_owner: LockOwner,
        start: u64,
        end: u64,
        typ: i32,
        pid: u32,
        sleep: bool,
        reply: ReplyEmpty,
    ) {
        enter!(self, Op::setlk, reply);
        let Some(srv) = self.sh.server.clone() else { return reply.fail(Error::NoLockServer) };
        let file = self.backing_ino(ino);
        let owner = lock_owner.0;
        if typ == libc::F_UNLCK {
            let r = srv.call(json!({"op": "unlock", "file": file, "owner": owner, "start": start, "end": end}));
            if let Ok(v) = &r {
                if v["remaining"] == 0 {
                    self.sh.locks_held.lock().unwrap().remove(&(file, owner));
                }
            }
            return answer(reply, r.map_err(Error::from), |reply, _| reply.ok());
        }
        let lock = json!({"op": "lock", "file": file, "owner": owner, "start": start, "end": end,
                          "type": lock_type(typ), "pid": pid});
        let sh = self.sh.clone();
        let attempt = move || -> Result<bool, Error> {
            match srv.call(lock.clone()) {
                Ok(_) => {
                    sh.locks_held.lock().unwrap().insert((file, owner));
                    Ok(true)
                }
                Err(CallError::Refused(v)) if v["errno"] == libc::EAGAIN => Ok(false),
                Err(CallError::Refused(v)) => Err(Error::LockRefused(v["errno"].as_i64().unwrap_or(5) as i32)),
                Err(e @ (CallError::Stopping | CallError::TimedOut)) => Err(e.into()),
            }
        };
        match attempt() {
            Ok(true) => reply.ok(),
            Ok(false) if !sleep => reply.fail(Error::LockHeld),
            Ok(false) => {
                // A blocking lock: the Linux client polls the server for it. Poll in a
                // thread (the mount goes on meanwhile) until granted or the asker is gone.
                let asker = req.pid();
                std::thread::spawn(move || {
                    let mut delay = Duration::from_millis(100);
                    loop {
                        std::thread::sleep(delay);
                        delay = (delay * 2).min(Duration::from_secs(1));
                        if !std::path::Path::new(&format!("/proc/{asker}")).exists() {
                            return reply.fail(Error::LockWaiterGone);
                        }
                        match attempt() {
                            Ok(true) => return reply.ok(),
                            Ok(false) => continue,
                            Err(e) => return reply.fail(e),
                        }
                    }
                });
            }
            Err(e) => reply.fail(e),
        }
    }

    fn fallocate(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        enter!(self, Op::fallocate, reply);
        let r = (|| {
            self.writable()?;
            let h = self.handle(fh)?;
            if mode == 0 && self.sh.room(length) < length {
                self.sh.stats.enospc.fetch_add(1, Relaxed);
                return Err(Error::NoSpace);
            }
            // SAFETY: plain syscall.
            check(unsafe { libc::fallocate(h.file.as_raw_fd(), mode, offset as i64, length as i64) }).map(|_| ())
        })();
        answer(reply, r, |reply, ()| reply.ok());
    }

    fn lseek(&self, _req: &Request, _ino: INodeNo, fh: FileHandle, offset: i64, whence: i32, reply: ReplyLseek) {
        enter!(self, Op::lseek, reply);
        let r = self.handle(fh).and_then(|h| {
            // SAFETY: plain syscall.
            let o = unsafe { libc::lseek(h.file.as_raw_fd(), offset, whence) };
            if o < 0 {
                Err(last())
            } else {
                Ok(o)
            }
        });
        answer(reply, r, |reply, o| reply.offset(o));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semantics_names_round_trip() {
        for s in [Semantics::SillyRename, Semantics::PosixUnlink] {
            assert_eq!(Semantics::parse(s.name()), Some(s));
        }
        assert_eq!(Semantics::parse("hard_remove"), None);
    }

    #[test]
    fn root_and_inode_1_swap_and_nothing_else_moves() {
        let dir = std::env::temp_dir();
        let sh = Arc::new(Shared::new(
            Semantics::SillyRename,
            Arc::new(Gate::default()),
            None,
            Mode { passthrough: false, reason: String::new() },
            None,
        ));
        let fs = Fs::new(&dir, sh, Counter::new(None), false, false).unwrap();
        let root = fs.root_ino;
        assert_eq!(fs.ino_of(root), 1);
        assert_eq!(fs.ino_of(1), root);
        assert_eq!(fs.ino_of(12345), if root == 12345 { 1 } else { 12345 });
    }

    #[test]
    fn a_soft_mount_fails_a_request_with_eio_at_its_major_timeout_a_hard_one_waits() {
        let d = Scratch::new("soft");
        let gate = Arc::new(Gate::default());
        let mode = || Mode { passthrough: false, reason: String::new() };
        let soft =
            Arc::new(Shared::new(Semantics::PosixUnlink, gate.clone(), None, mode(), Some(Duration::from_millis(300))));
        let fs = Fs::new(&d.0, soft.clone(), Counter::new(None), false, false).unwrap();
        assert!(fs.enter(Op::getattr).is_ok(), "an open gate lets it through");
        gate.pause(None);
        let t = Instant::now();
        let e = fs.enter(Op::write).unwrap_err();
        assert!(t.elapsed() >= Duration::from_millis(290), "{:?}", t.elapsed());
        assert_eq!(e.errno().code(), libc::EIO);
        assert_eq!(soft.stats.soft_timeouts.load(Relaxed), 1);
        let hard = Arc::new(Shared::new(Semantics::PosixUnlink, gate.clone(), None, mode(), None));
        let fs = Arc::new(Fs::new(&d.0, hard.clone(), Counter::new(None), false, false).unwrap());
        let f2 = fs.clone();
        let waiting = std::thread::spawn(move || f2.enter(Op::write).is_ok());
        std::thread::sleep(Duration::from_millis(600));
        assert!(!waiting.is_finished(), "a hard mount waits as long as it takes");
        gate.resume();
        assert!(waiting.join().unwrap());
        assert_eq!(hard.stats.soft_timeouts.load(Relaxed), 0);
    }

    #[test]
    fn without_a_server_there_is_no_size_limit() {
        // No server: no limit.
        let sh = Shared::new(
            Semantics::PosixUnlink,
            Arc::new(Gate::default()),
            None,
            Mode { passthrough: false, reason: String::new() },
            None,
        );
        assert_eq!(sh.room(1 << 40), 1 << 40);
    }

    /// A scratch backing directory, removed when dropped.
    struct Scratch(std::path::PathBuf);

    impl Scratch {
        fn new(what: &str) -> Scratch {
            let n = std::sync::atomic::AtomicU64::new(0);
            let p = std::env::temp_dir().join(format!(
                "tr4947-nfs-{what}-{}-{:?}-{}",
                std::process::id(),
                std::thread::current().id(),
                n.fetch_add(1, Relaxed)
            ));
            std::fs::create_dir_all(&p).unwrap();
            Scratch(p)
        }

        fn names(&self) -> Vec<String> {
            let mut v: Vec<String> =
                std::fs::read_dir(&self.0).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
            v.sort();
            v
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn mount(dir: &std::path::Path, semantics: Semantics, server: Option<Arc<Server>>) -> Arc<Fs> {
        let sh = Arc::new(Shared::new(
            semantics,
            Arc::new(Gate::default()),
            server,
            Mode { passthrough: false, reason: String::new() },
            None,
        ));
        Arc::new(Fs::new(dir, sh, Counter::new(None), false, false).unwrap())
    }

    /// What the kernel does for open(): look the name up, open the inode.
    fn open_file(fs: &Fs, name: &str) -> (INodeNo, FileHandle) {
        let a = fs.lookup_entry(fs.ifd(INodeNo(1)).unwrap().as_raw_fd(), &CString::new(name).unwrap()).unwrap();
        let file = File::open(proc_path(fs.ifd(a.ino).unwrap().as_raw_fd()).to_str().unwrap()).unwrap();
        let (fh, _) = fs.new_handle(a.ino.0, file, |_| unreachable!("no passthrough"));
        (a.ino, fh)
    }

    #[test]
    fn silly_rename_and_last_close_remove_the_file() {
        let d = Scratch::new("silly");
        std::fs::write(d.0.join("f"), b"x").unwrap();
        let fs = mount(&d.0, Semantics::SillyRename, None);
        let (ino, fh) = open_file(&fs, "f");
        fs.remove(INodeNo(1), OsStr::new("f")).unwrap();
        let left = d.names();
        assert_eq!(left.len(), 1);
        assert!(left[0].starts_with(".nfs"), "{left:?}");
        fs.close(ino, fh);
        assert_eq!(d.names(), Vec::<String>::new());
    }

    #[test]
    fn a_last_close_during_unlink_leaves_no_nfs_file() {
        // unlink finds the file open; before it renames the file, the last close comes
        // (another FUSE thread). Either unlink removes the file (the close came first) or the
        // close removes the .nfs name (the rename came first): nothing may be left.
        let d = Scratch::new("race");
        std::fs::write(d.0.join("f"), b"x").unwrap();
        let fs = mount(&d.0, Semantics::SillyRename, None);
        let (ino, fh) = open_file(&fs, "f");
        let closer: Arc<Mutex<Option<std::thread::JoinHandle<()>>>> = Arc::default();
        let (fs2, c2) = (fs.clone(), closer.clone());
        WINDOW.with(|w| {
            *w.borrow_mut() = Some(Box::new(move || {
                *c2.lock().unwrap() = Some(std::thread::spawn(move || fs2.close(ino, fh)));
                std::thread::sleep(Duration::from_millis(300)); // time enough for the close
            }))
        });
        fs.remove(INodeNo(1), OsStr::new("f")).unwrap();
        let closer = closer.lock().unwrap().take().expect("unlink found the file open");
        closer.join().unwrap();
        assert_eq!(d.names(), Vec::<String>::new(), "a .nfs file left behind for good");
    }

    /// The storage stand-in's NFS service, enough of it for the space accounting: the
    /// session upgrade, hello, and answers to every request but the first "space" one, which
    /// it keeps unanswered (as a server that went away during a LIF move). Sends on `asked`
    /// when that request arrives.
    fn stalling_server(asked: std::sync::mpsc::Sender<()>) -> String {
        use std::io::{BufRead, BufReader, Write};
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            let mut rd = BufReader::new(s.try_clone().unwrap());
            let mut w = s;
            let mut line = String::new();
            while rd.read_line(&mut line).unwrap() > 0 && line != "\r\n" {
                line.clear();
            }
            w.write_all(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: tr4947-nfs\r\n\r\n").unwrap();
            let mut stalled = false;
            for line in rd.lines() {
                let Ok(line) = line else { return };
                let req: serde_json::Value = serde_json::from_str(&line).unwrap();
                if req["op"] == "space" && !stalled {
                    stalled = true;
                    let _ = asked.send(());
                    continue;
                }
                let answer = json!({"id": req["id"], "ok": true, "size": 1u64 << 30, "used": 1u64 << 20});
                if w.write_all(format!("{answer}\n").as_bytes()).is_err() {
                    return;
                }
            }
        });
        addr
    }

    /// Run `f` in a thread; its result if it comes within `limit`.
    fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(limit).ok()
    }

    #[test]
    fn status_and_statfs_answer_while_a_space_refresh_waits_on_the_server() {
        // A write asks the server for the volume's space and the server does not answer
        // (the LIF is moving; the gate is shut). status must still answer from what the
        // layer last heard, and statfs's own question must not queue behind the write's.
        let (tx, asked) = std::sync::mpsc::channel();
        let addr = stalling_server(tx);
        let gate = Arc::new(Gate::default());
        let srv = Server::new(&addr, "m1", gate.clone(), crate::server::Timeouts::default());
        srv.start().unwrap();
        let sh = Arc::new(Shared::new(
            Semantics::PosixUnlink,
            gate.clone(),
            Some(srv.clone()),
            Mode { passthrough: false, reason: String::new() },
            None,
        ));
        let writer = {
            let sh = sh.clone();
            std::thread::spawn(move || sh.room(4096))
        };
        asked.recv_timeout(Duration::from_secs(5)).expect("the write asked the server for space");
        gate.pause(None);
        let info = Arc::new(crate::control::Info {
            version: "test",
            backing: String::new(),
            mountpoint: String::new(),
            source: String::new(),
        });
        let (sh2, info2) = (sh.clone(), info.clone());
        let status =
            within(Duration::from_secs(2), move || crate::control::answer(&json!({"op": "status"}), &sh2, &info2));
        let sh3 = sh.clone();
        let statfs = within(Duration::from_secs(2), move || sh3.space_now());
        srv.stop(); // ends the write's call
        let _ = writer.join();
        let status = status.expect("status answered within 2 s");
        assert_eq!(status["paused"], true);
        assert_eq!(statfs.expect("statfs answered within 2 s"), Some((1 << 30, 1 << 20)));
    }
}
