//! Reading the captured MCP traffic in `crates/brain-mcp-proto/tests/fixtures/` (the format
//! is described in that folder's README): the raw material of the seed corpora.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::value::RawValue;

/// Where the captures live, relative to the project root.
pub(crate) const DIR: &str = "crates/brain-mcp-proto/tests/fixtures";

/// One captured exchange: a `<peer>/<scenario>.jsonl` file.
#[derive(Debug)]
pub(crate) struct Capture {
    /// The peer folder, such as `python`.
    pub(crate) peer: String,
    /// The messages, in the order the client saw them.
    pub(crate) messages: Vec<Captured>,
}

/// One message of a capture.
#[derive(Debug)]
pub(crate) struct Captured {
    /// Sent by the client (`false`: received from the server).
    pub(crate) sent: bool,
    /// The message's JSON text exactly as captured.
    pub(crate) text: String,
}

impl Captured {
    /// The raw text of member `name` of the message, if it is an object that has one.
    pub(crate) fn member(&self, name: &str) -> Option<String> {
        let members: HashMap<String, Box<RawValue>> = serde_json::from_str(&self.text).ok()?;
        members.get(name).map(|raw| raw.get().to_owned())
    }
}

/// Every capture under `root`'s fixture folder, sorted by path so seeds are stable.
pub(crate) fn read_all(root: &Path) -> Result<Vec<Capture>, String> {
    let mut files = Vec::new();
    jsonl_files(&root.join(DIR), &mut files)?;
    files.sort();
    if files.is_empty() {
        return Err(format!("no captured fixtures under {DIR}"));
    }
    files.iter().map(|file| read(file)).collect()
}

fn jsonl_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry
            .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
            .path();
        if path.is_dir() {
            jsonl_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
    Ok(())
}

fn read(file: &Path) -> Result<Capture, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let peer = file
        .parent()
        .and_then(Path::file_name)
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut messages = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("{}:{}", file.display(), n + 1);
        let fields: HashMap<String, Box<RawValue>> =
            serde_json::from_str(line).map_err(|e| format!("{}: {e}", at()))?;
        let (Some(dir), Some(message)) = (fields.get("dir"), fields.get("message")) else {
            return Err(format!("{}: a line without dir or message", at()));
        };
        messages.push(Captured {
            sent: dir.get() == "\"send\"",
            text: message.get().to_owned(),
        });
    }
    Ok(Capture { peer, messages })
}
