//! The mount's connection to the storage stand-in's NFS service (the data LIF, port 2049).
//!
//! One TCP connection per mount, as a Linux client holds one per server: an HTTP/1.1 request
//! upgraded to a line-JSON session (the service is an HTTP server; one upgrade handshake is
//! all the HTTP this needs, so no HTTP client library). Over it go what an NFSv4 client keeps
//! on its server: the lease (renewed at two thirds of its time, as the Linux client's renewd
//! does), byte-range locks, and the volume's space for ENOSPC.
//!
//! When the connection drops (the stand-in closes it when the LIF moves, or the service is
//! gone), the mount's gate shuts, requests in flight are sent again once the connection is
//! back (counted as retransmissions) and every new connection after the first is counted as
//! a reconnection. Reconnection is retried with a growing delay (0.1 s doubling to 3 s). Each
//! outage is measured, from the moment the reader sees the connection end to the moment the
//! new session's hello is answered (stats::Outages), so a drill reads how long a LIF move,
//! takeover or giveback cut the client off rather than assuming it.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::gate::Gate;
use crate::stats::Outages;

pub struct Server {
    addr: String,
    mount_id: String,
    pub client_id: String,
    gate: Arc<Gate>,
    writer: Mutex<Option<TcpStream>>,
    pending: Mutex<HashMap<u64, Sender<Value>>>,
    next_id: AtomicU64,
    pub connects: AtomicU64,
    pub retrans: AtomicU64,
    pub lease_seconds: AtomicU64,
    pub grace_seconds: AtomicU64,
    pub outages: Mutex<Outages>,
    stopping: AtomicBool,
}

/// What a call may answer besides success.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The server answered ok=false: the body says why.
    #[error("refused: {0}")]
    Refused(Value),
    #[error("the mount is stopping")]
    Stopping,
}

impl Server {
    pub fn new(addr: &str, mount_id: &str, gate: Arc<Gate>) -> Arc<Server> {
        let host = hostname();
        let mut r = [0u8; 8];
        // SAFETY: getrandom writes at most r.len() bytes into r.
        unsafe { libc::getrandom(r.as_mut_ptr().cast(), r.len(), 0) };
        Arc::new(Server {
            addr: addr.to_string(),
            mount_id: mount_id.to_string(),
            client_id: format!("{host}/{}/{:016x}", std::process::id(), u64::from_ne_bytes(r)),
            gate,
            writer: Mutex::new(None),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            connects: AtomicU64::new(0),
            retrans: AtomicU64::new(0),
            lease_seconds: AtomicU64::new(30),
            grace_seconds: AtomicU64::new(45),
            outages: Mutex::new(Outages::default()),
            stopping: AtomicBool::new(false),
        })
    }

    /// Connect once (the mount fails if the server cannot be reached), then keep the
    /// connection up in the background and renew the lease.
    pub fn start(self: &Arc<Server>) -> std::io::Result<()> {
        let stream = self.connect()?;
        self.run_connection(stream);
        let me = self.clone();
        std::thread::Builder::new().name("renew".into()).spawn(move || me.renew_loop())?;
        Ok(())
    }

    pub fn reconnects(&self) -> u64 {
        self.connects.load(Relaxed).saturating_sub(1)
    }

    fn connect(&self) -> std::io::Result<TcpStream> {
        let s = TcpStream::connect_timeout(
            &self.addr.parse().map_err(|e| std::io::Error::other(format!("{}: {e}", self.addr)))?,
            Duration::from_secs(5),
        )?;
        s.set_nodelay(true)?;
        let host = self.addr.rsplit_once(':').map(|x| x.0).unwrap_or(&self.addr);
        let req =
            format!("GET /session HTTP/1.1\r\nHost: {host}\r\nConnection: Upgrade\r\nUpgrade: tr4947-nfs\r\n\r\n");
        (&s).write_all(req.as_bytes())?;
        let mut rd = BufReader::new(s.try_clone()?);
        let mut status = String::new();
        rd.read_line(&mut status)?;
        if !status.starts_with("HTTP/1.1 101") {
            return Err(std::io::Error::other(format!("server refused the session: {}", status.trim())));
        }
        loop {
            let mut line = String::new();
            if rd.read_line(&mut line)? == 0 || line == "\r\n" {
                break;
            }
        }
        // Say who we are: a reconnecting client keeps its id, so its lease and locks stay.
        let hello = json!({"id": 0, "op": "hello", "mount": self.mount_id, "client": self.client_id});
        (&s).write_all(format!("{hello}\n").as_bytes())?;
        let mut line = String::new();
        rd.read_line(&mut line)?;
        let v: Value = serde_json::from_str(&line).map_err(|e| std::io::Error::other(format!("hello: {e}")))?;
        if v["ok"] != true {
            return Err(std::io::Error::other(format!(
                "server refused the mount: {}",
                v["error"].as_str().unwrap_or("?")
            )));
        }
        if let Some(l) = v["lease"].as_u64() {
            self.lease_seconds.store(l, Relaxed);
        }
        if let Some(g) = v["grace"].as_u64() {
            self.grace_seconds.store(g, Relaxed);
        }
        self.connects.fetch_add(1, Relaxed);
        self.outages.lock().unwrap().back(Instant::now());
        Ok(s)
    }

    /// Install a connected stream and read its answers in a thread that, when the stream
    /// ends, shuts the gate and reconnects.
    fn run_connection(self: &Arc<Server>, stream: TcpStream) {
        let reader = stream.try_clone().expect("clone of a connected socket");
        *self.writer.lock().unwrap() = Some(stream);
        self.gate.set_connected(true);
        let me = self.clone();
        std::thread::Builder::new().name("server".into()).spawn(move || me.read_loop(reader)).expect("thread");
    }

    fn read_loop(self: Arc<Server>, stream: TcpStream) {
        let mut rd = BufReader::new(stream);
        loop {
            let mut line = String::new();
            match rd.read_line(&mut line) {
                Ok(n) if n > 0 => {
                    if let Ok(v) = serde_json::from_str::<Value>(&line) {
                        if let Some(id) = v["id"].as_u64() {
                            if let Some(tx) = self.pending.lock().unwrap().remove(&id) {
                                let _ = tx.send(v);
                            }
                        }
                    }
                }
                _ => break,
            }
        }
        // The connection is gone: the outage starts; shut the gate, fail the calls in flight
        // (they are sent again on the new connection), reconnect.
        self.outages.lock().unwrap().lost(Instant::now());
        self.gate.set_connected(false);
        *self.writer.lock().unwrap() = None;
        self.pending.lock().unwrap().clear();
        if self.stopping.load(Relaxed) {
            return;
        }
        let mut delay = Duration::from_millis(100);
        loop {
            if self.stopping.load(Relaxed) {
                return;
            }
            match self.connect() {
                Ok(s) => {
                    self.run_connection(s);
                    return;
                }
                Err(e) => {
                    eprintln!("tr4947-nfs: server {} not answering ({e}); retrying", self.addr);
                    std::thread::sleep(delay);
                    delay = (delay * 2).min(Duration::from_secs(3));
                }
            }
        }
    }

    fn renew_loop(self: Arc<Server>) {
        loop {
            let lease = self.lease_seconds.load(Relaxed).max(1);
            let mut left = Duration::from_millis(lease * 2000 / 3);
            while !left.is_zero() {
                if self.stopping.load(Relaxed) {
                    return;
                }
                let step = left.min(Duration::from_millis(200));
                std::thread::sleep(step);
                left -= step;
            }
            let _ = self.call(json!({"op": "renew"}));
        }
    }

    /// Send a request and wait for its answer, through disconnections (a request whose
    /// connection dropped is sent again: a retransmission).
    pub fn call(&self, mut req: Value) -> Result<Value, CallError> {
        loop {
            if self.stopping.load(Relaxed) {
                return Err(CallError::Stopping);
            }
            let id = self.next_id.fetch_add(1, Relaxed);
            req["id"] = id.into();
            let (tx, rx) = channel();
            let sent = {
                let mut w = self.writer.lock().unwrap();
                match w.as_mut() {
                    Some(s) => {
                        self.pending.lock().unwrap().insert(id, tx);
                        s.write_all(format!("{req}\n").as_bytes()).is_ok()
                    }
                    None => false,
                }
            };
            if sent {
                let t0 = Instant::now();
                loop {
                    match rx.recv_timeout(Duration::from_millis(500)) {
                        Ok(v) => {
                            return if v["ok"] == true { Ok(v) } else { Err(CallError::Refused(v)) };
                        }
                        Err(RecvTimeoutError::Disconnected) => break, // the connection dropped
                        Err(RecvTimeoutError::Timeout) => {
                            if self.stopping.load(Relaxed) {
                                return Err(CallError::Stopping);
                            }
                            // A hard mount waits as long as it takes (timeo=600: the kernel
                            // retransmits after 60 s; so does this).
                            if t0.elapsed() >= Duration::from_secs(60) {
                                self.pending.lock().unwrap().remove(&id);
                                break;
                            }
                        }
                    }
                }
            } else {
                self.pending.lock().unwrap().remove(&id);
            }
            self.retrans.fetch_add(1, Relaxed);
            // wait for the connection to come back
            while self.writer.lock().unwrap().is_none() {
                if self.stopping.load(Relaxed) {
                    return Err(CallError::Stopping);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }

    /// A clean goodbye (umount): the server releases this client's state at once.
    pub fn stop(&self) {
        let _ = self.call_once(json!({"op": "bye"}), Duration::from_secs(2));
        self.stopping.store(true, Relaxed);
        if let Some(s) = self.writer.lock().unwrap().take() {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    fn call_once(&self, mut req: Value, timeout: Duration) -> Option<Value> {
        let id = self.next_id.fetch_add(1, Relaxed);
        req["id"] = id.into();
        let (tx, rx) = channel();
        {
            let mut w = self.writer.lock().unwrap();
            let s = w.as_mut()?;
            self.pending.lock().unwrap().insert(id, tx);
            s.write_all(format!("{req}\n").as_bytes()).ok()?;
        }
        rx.recv_timeout(timeout).ok()
    }
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes a NUL-terminated name of at most buf.len() bytes.
    unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}
