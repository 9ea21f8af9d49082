//! Installing peers through `peers/install.sh`, serialised across threads and processes.

use std::collections::HashSet;
use std::fs::{self, File};
use std::process::Command;
use std::sync::{Mutex, PoisonError};

use super::{PeerError, PeerKind, peers_dir, project_root};

/// Peers this process has already installed (or checked) successfully.
static DONE: Mutex<Option<HashSet<PeerKind>>> = Mutex::new(None);

/// Makes sure `kind` is installed; cheap after the first successful call in a process.
///
/// The installer itself is idempotent (a marker file per pinned version); an exclusive
/// lock on `target/peers/.install.lock` keeps parallel test processes from installing
/// the same thing twice at once.
pub(super) fn ensure_installed(kind: PeerKind) -> Result<(), PeerError> {
    let mut done = DONE.lock().unwrap_or_else(PoisonError::into_inner);
    if done.get_or_insert_with(HashSet::new).contains(&kind) {
        return Ok(());
    }
    let dir = peers_dir();
    fs::create_dir_all(&dir).map_err(|source| PeerError::Io {
        what: "creating the peers directory",
        path: dir.clone(),
        source,
    })?;
    let lock_path = dir.join(".install.lock");
    let lock = File::create(&lock_path).map_err(|source| PeerError::Io {
        what: "opening the install lock",
        path: lock_path.clone(),
        source,
    })?;
    lock.lock().map_err(|source| PeerError::Io {
        what: "taking the install lock",
        path: lock_path.clone(),
        source,
    })?;
    let script = project_root().join("peers").join("install.sh");
    let output = Command::new("bash")
        .arg(&script)
        .arg(kind.install_name())
        .env("BRAIN_PEERS_DIR", &dir)
        .current_dir(project_root())
        .output()
        .map_err(|source| PeerError::Io {
            what: "running the peer installer",
            path: script.clone(),
            source,
        });
    // Unlocking also happens when `lock` is dropped; do it explicitly for clarity.
    let _ = lock.unlock();
    let output = output?;
    if !output.status.success() {
        return Err(PeerError::Install {
            kind,
            message: format!(
                "{} exited with {}\nstdout:\n{}\nstderr:\n{}",
                script.display(),
                output.status,
                tail(&String::from_utf8_lossy(&output.stdout), 40),
                tail(&String::from_utf8_lossy(&output.stderr), 40),
            ),
        });
    }
    done.get_or_insert_with(HashSet::new).insert(kind);
    Ok(())
}

/// The last `lines` lines of `text`.
pub(super) fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
