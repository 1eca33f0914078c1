//! The mount's control socket: one JSON request per line, one JSON answer per line.
//!
//!   {"op": "status"}                  mode, semantics, gate, connection, counters, space,
//!                                     reconnections and their measured outages
//!   {"op": "pause", "seconds": 5}     shut the gate (no "seconds": until resumed)
//!   {"op": "resume"}

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::fs::Shared;

pub struct Info {
    pub version: &'static str,
    pub backing: String,
    pub mountpoint: String,
    pub source: String,
}

pub fn serve(listener: UnixListener, sh: Arc<Shared>, info: Arc<Info>) {
    for conn in listener.incoming().flatten() {
        let (sh, info) = (sh.clone(), info.clone());
        std::thread::spawn(move || handle(conn, &sh, &info));
    }
}

fn handle(conn: UnixStream, sh: &Shared, info: &Info) {
    let Ok(w) = conn.try_clone() else { return };
    let mut w = w;
    for line in BufReader::new(conn).lines() {
        let Ok(line) = line else { return };
        let answer = match serde_json::from_str::<Value>(&line) {
            Ok(req) => answer(&req, sh, info),
            Err(e) => json!({"ok": false, "error": format!("not JSON: {e}")}),
        };
        if w.write_all(format!("{answer}\n").as_bytes()).is_err() {
            return;
        }
    }
}

pub fn mode_text(sh: &Shared, version: &str) -> String {
    let m = sh.mode.lock().unwrap();
    if m.passthrough {
        format!("tr4947-nfs {version} (FUSE passthrough)")
    } else {
        format!("tr4947-nfs {version} (no passthrough: {})", m.reason)
    }
}

pub(crate) fn answer(req: &Value, sh: &Shared, info: &Info) -> Value {
    match req["op"].as_str() {
        Some("status") => status(sh, info),
        Some("pause") => {
            let secs = req["seconds"].as_f64();
            if secs.is_some_and(|s| s.is_nan() || s < 0.0) {
                return json!({"ok": false, "error": "seconds must be a number >= 0"});
            }
            sh.gate.pause(secs);
            json!({"ok": true})
        }
        Some("resume") => {
            sh.gate.resume();
            json!({"ok": true})
        }
        Some(op) => json!({"ok": false, "error": format!("unknown op {op:?}: status, pause, resume")}),
        None => json!({"ok": false, "error": "missing \"op\""}),
    }
}

fn status(sh: &Shared, info: &Info) -> Value {
    let (paused, left, connected, answering) = sh.gate.status();
    let s = &sh.stats;
    let passthrough = sh.mode.lock().unwrap().passthrough;
    let reason = sh.mode.lock().unwrap().reason.clone();
    let mut v = json!({
        "ok": true,
        "layer": mode_text(sh, info.version),
        "version": info.version,
        "passthrough": passthrough,
        "reason": if passthrough { Value::Null } else { reason.into() },
        "semantics": sh.semantics.name(),
        "source": info.source,
        "backing": info.backing,
        "mountpoint": info.mountpoint,
        "pid": std::process::id(),
        "paused": paused,
        "pause_left": left,
        "connected": connected,
        "answering": answering,
        // A soft mount's major timeout (s); none on a hard mount.
        "soft": sh.soft.map(|d| d.as_secs_f64()),
        "soft_timeouts": s.soft_timeouts.load(Relaxed),
        "ops": s.ops_json(),
        // Bytes this process moved; passthrough I/O never reaches it.
        "bytes_read": s.bytes_read.load(Relaxed),
        "bytes_written": s.bytes_written.load(Relaxed),
        "opens_passthrough": s.opens_passthrough.load(Relaxed),
        "opens_served": s.opens_served.load(Relaxed),
        "silly_renames": s.silly_renames.load(Relaxed),
        "silly_deletes": s.silly_deletes.load(Relaxed),
        "waited": s.waited.load(Relaxed),
        "enospc": s.enospc.load(Relaxed),
        "locks_held": sh.locks_held.lock().unwrap().len(),
    });
    if let Some(srv) = &sh.server {
        let out = srv.outages.lock().unwrap();
        // What the layer last heard (asking here would wait while disconnected).
        if let Some((size, used, since)) = sh.space_seen() {
            v["space"] = json!({"size": size, "used": used, "written_since": since});
        }
        v["server"] = json!({
            "client_id": srv.client_id,
            "reconnects": srv.reconnects(),
            // measured outages (ms): the last, the total, the last few
            "last_outage_ms": out.last_ms(),
            "outage_ms_total": out.total_ms,
            "outages": out.count,
            "outages_ms": out.recent_ms(),
            "retrans": srv.retrans.load(Relaxed),
            "silences": srv.silences.load(Relaxed),
            "timeo_s": srv.timeouts.timeo.as_secs_f64(),
            "lease_seconds": srv.lease_seconds.load(Relaxed),
            "grace_seconds": srv.grace_seconds.load(Relaxed),
        });
    }
    v
}
