//! tr4947-nfs: the lab's NFS client layer for one mount (see fs.rs).
//!
//!   tr4947-nfs BACKING MOUNTPOINT --semantics silly-rename|posix-unlink [options]
//!
//! Mounts, then prints one JSON line on stdout ({"ready": true, "layer": ..., ...}) and
//! serves until the mount is unmounted (umount, fusermount3 -u) or SIGTERM/SIGINT (which
//! unmount it lazily). Errors before the mount go to stderr with exit status 1.

mod control;
mod error;
mod fs;
mod gate;
mod names;
mod server;
mod stats;

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::sync::Arc;

use error::{ProbeError, StartError};
use fuser::{BackingId, MountOption, SessionACL};
use serde_json::json;

const VERSION: &str = env!("CARGO_PKG_VERSION");

const USAGE: &str = "usage: tr4947-nfs BACKING MOUNTPOINT --semantics silly-rename|posix-unlink
    [--fsname SOURCE] [--subtype nfs|nfs4] [--control SOCKET] [--server ADDR:PORT --mount-id ID]
    [--no-passthrough] [--silly-counter FILE] [--threads N] [--ro]
    [--timeo SECONDS] [--soft SECONDS]

  --timeo SECONDS  how long a request to the server goes unanswered before the layer
                   connects again (nfs(5)'s timeo, in seconds here; default 60)
  --soft SECONDS   a soft mount: a request that waits this long (the major timeout the mount
                   shim works out from timeo and retrans) fails with EIO; default: hard,
                   requests wait as long as it takes";

struct Args {
    backing: PathBuf,
    mountpoint: PathBuf,
    semantics: fs::Semantics,
    fsname: String,
    subtype: String,
    control: Option<PathBuf>,
    server: Option<(String, String)>,
    passthrough: bool,
    counter: Option<PathBuf>,
    threads: usize,
    read_only: bool,
    timeouts: server::Timeouts,
}

/// A number of seconds for `flag`: positive, finite, at most a day.
fn seconds(flag: &str, v: &str) -> Result<std::time::Duration, StartError> {
    v.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
        .map(std::time::Duration::from_secs_f64)
        .ok_or_else(|| format!("{flag} {v:?}: a number of seconds, more than 0 and at most 86400").into())
}

fn parse(argv: &[String]) -> Result<Args, StartError> {
    let mut pos = Vec::new();
    let (mut semantics, mut fsname, mut subtype, mut control) = (None, None, "nfs".to_string(), None);
    let (mut server, mut mount_id, mut passthrough, mut counter) = (None, None, true, None);
    let (mut threads, mut read_only) = (2usize, false);
    let mut timeouts = server::Timeouts::default();
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        let mut val = |name: &str| it.next().cloned().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--semantics" => {
                let v = val(a)?;
                semantics =
                    Some(fs::Semantics::parse(&v).ok_or(format!("--semantics {v:?}: silly-rename or posix-unlink"))?);
            }
            "--fsname" => fsname = Some(val(a)?),
            "--subtype" => subtype = val(a)?,
            "--control" => control = Some(PathBuf::from(val(a)?)),
            "--server" => server = Some(val(a)?),
            "--mount-id" => mount_id = Some(val(a)?),
            "--no-passthrough" => passthrough = false,
            "--silly-counter" => counter = Some(PathBuf::from(val(a)?)),
            "--threads" => {
                let v = val(a)?;
                threads = v
                    .parse()
                    .ok()
                    .filter(|n| (1..=16).contains(n))
                    .ok_or(format!("--threads {v:?}: a number from 1 to 16"))?;
            }
            "--ro" => read_only = true,
            "--timeo" => timeouts.timeo = seconds(a, &val(a)?)?,
            "--soft" => timeouts.soft = Some(seconds(a, &val(a)?)?),
            s if s.starts_with('-') => return Err(format!("unknown option {s}").into()),
            _ => pos.push(PathBuf::from(a)),
        }
    }
    let [backing, mountpoint] =
        <[PathBuf; 2]>::try_from(pos).map_err(|_| StartError::from("give BACKING and MOUNTPOINT"))?;
    let semantics = semantics.ok_or("--semantics is required")?;
    let server = match (server, mount_id) {
        (Some(s), Some(m)) => Some((s, m)),
        (None, None) => None,
        _ => return Err("--server and --mount-id go together".into()),
    };
    if !backing.is_dir() {
        return Err(StartError::NoBacking(backing));
    }
    if !mountpoint.is_dir() {
        return Err(StartError::NoMountPoint(mountpoint));
    }
    Ok(Args {
        fsname: fsname.unwrap_or_else(|| backing.display().to_string()),
        backing,
        mountpoint,
        semantics,
        subtype,
        control,
        server,
        passthrough,
        counter,
        threads,
        read_only,
        timeouts,
    })
}

/// Can the kernel take a backing file of this directory's file system? An unnamed file
/// (O_TMPFILE: nothing appears in the volume) is registered and unregistered again; where
/// the file system has no O_TMPFILE, a named one, removed as soon as it is open.
fn probe_passthrough(session: &impl AsFd, backing: &std::path::Path) -> Result<(), ProbeError> {
    let dir = CString::new(backing.as_os_str().as_bytes()).unwrap();
    // SAFETY: open returns a descriptor we own.
    let mut fd = unsafe { libc::open(dir.as_ptr(), libc::O_TMPFILE | libc::O_RDWR | libc::O_CLOEXEC, 0o600) };
    if fd < 0 {
        let named = backing.join(format!(".tr4947-nfs-probe-{}", std::process::id()));
        let c = CString::new(named.as_os_str().as_bytes()).unwrap();
        // SAFETY: as above; the name is removed right away.
        fd = unsafe { libc::open(c.as_ptr(), libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC, 0o600) };
        if fd >= 0 {
            unsafe { libc::unlink(c.as_ptr()) };
        }
    }
    if fd < 0 {
        return Err(ProbeError::NoProbeFile(std::io::Error::last_os_error()));
    }
    let file = unsafe { OwnedFd::from_raw_fd(fd) };
    let id = BackingId::create_raw(session, &file).map_err(ProbeError::Refused)?;
    // FUSE_DEV_IOC_BACKING_CLOSE = _IOW(229, 2, uint32_t)
    const BACKING_CLOSE: libc::c_ulong = (1 << 30) | (4 << 16) | (229 << 8) | 2;
    // SAFETY: ioctl on the FUSE device with a pointer to the id it returned.
    unsafe { libc::ioctl(session.as_fd().as_raw_fd(), BACKING_CLOSE, &id) };
    Ok(())
}

/// SIGTERM/SIGINT unmount the file system (lazily), which ends the session cleanly.
fn unmount_on_signal(mountpoint: PathBuf) {
    // SAFETY: signal mask manipulation and sigwait on a set we built.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        std::thread::spawn(move || {
            let mut sig = 0;
            libc::sigwait(&set, &mut sig);
            let mp = CString::new(mountpoint.as_os_str().as_bytes()).unwrap();
            libc::umount2(mp.as_ptr(), libc::MNT_DETACH);
        });
    }
}

fn run(a: Args) -> Result<(), StartError> {
    unmount_on_signal(a.mountpoint.clone());
    let gate = Arc::new(gate::Gate::default());
    let server = match &a.server {
        Some((addr, id)) => {
            let s = server::Server::new(addr, id, gate.clone(), a.timeouts);
            s.start().map_err(|source| StartError::Server { addr: addr.clone(), source })?;
            Some(s)
        }
        None => None,
    };
    let mode = if a.passthrough {
        fs::Mode { passthrough: true, reason: String::new() }
    } else {
        fs::Mode {
            passthrough: false,
            reason: "turned off for this mount (pause and the size limit then see every write)".into(),
        }
    };
    let sh = Arc::new(fs::Shared::new(a.semantics, gate, server.clone(), mode, a.timeouts.soft));
    let fsys = fs::Fs::new(&a.backing, sh.clone(), names::Counter::new(a.counter.clone()), a.read_only, a.passthrough)
        .map_err(|source| StartError::Backing { path: a.backing.clone(), source })?;
    let mut cfg = fuser::Config::default();
    cfg.mount_options = vec![
        MountOption::FSName(a.fsname.clone()),
        MountOption::Subtype(a.subtype.clone()),
        MountOption::DefaultPermissions,
        if a.read_only { MountOption::RO } else { MountOption::RW },
    ];
    cfg.acl = SessionACL::All;
    cfg.n_threads = Some(a.threads);
    cfg.clone_fd = a.threads > 1;
    let session = fuser::Session::new(fsys, &a.mountpoint, &cfg)
        .map_err(|source| StartError::Mount { path: a.mountpoint.clone(), source })?;
    if sh.passthrough() {
        if let Err(reason) = probe_passthrough(&session, &a.backing) {
            sh.set_mode(false, &reason.to_string());
        }
    }
    let info = Arc::new(control::Info {
        version: VERSION,
        backing: a.backing.display().to_string(),
        mountpoint: a.mountpoint.display().to_string(),
        source: a.fsname.clone(),
    });
    if let Some(path) = &a.control {
        let _ = std::fs::remove_file(path);
        if let Some(d) = path.parent() {
            let _ = std::fs::create_dir_all(d);
        }
        let l = UnixListener::bind(path).map_err(|source| StartError::Control { path: path.clone(), source })?;
        let (sh, info) = (sh.clone(), info.clone());
        std::thread::spawn(move || control::serve(l, sh, info));
    }
    let m = sh.mode.lock().unwrap().passthrough;
    println!(
        "{}",
        json!({"ready": true, "layer": control::mode_text(&sh, VERSION), "passthrough": m,
                          "pid": std::process::id(), "version": VERSION})
    );
    // Done with stdout: whoever started us stops waiting for it.
    // SAFETY: dup2 of /dev/null over fd 1.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY);
        if null >= 0 {
            libc::dup2(null, 1);
            libc::close(null);
        }
    }
    let r = session.run();
    if let Some(s) = &server {
        s.stop();
    }
    if let Some(path) = &a.control {
        let _ = std::fs::remove_file(path);
    }
    r.map_err(StartError::Session)
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.iter().any(|a| a == "--version" || a == "-V") {
        println!("tr4947-nfs {VERSION}");
        return;
    }
    if argv.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return;
    }
    let r = parse(&argv).and_then(run);
    if let Err(e) = r {
        eprintln!("tr4947-nfs: {e}");
        if e.shows_usage() {
            eprintln!("{USAGE}");
        }
        std::process::exit(1);
    }
}
