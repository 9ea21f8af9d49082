//! The `tools/call` request as written on the wire, borrowed from the call's parts.

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::jsonrpc::RequestId;
use crate::meta;

use super::outgoing::Identity;

/// `tools/call` params borrowing the call's arguments (they can be large; no copy).
#[derive(Serialize)]
pub(super) struct CallParams<'a> {
    pub(super) name: &'a str,
    pub(super) arguments: ArgumentsView<'a>,
    #[serde(rename = "_meta")]
    pub(super) meta: &'a MetaView<'a>,
    #[serde(rename = "inputResponses", skip_serializing_if = "Option::is_none")]
    pub(super) input_responses: Option<&'a Map<String, Value>>,
    #[serde(rename = "requestState", skip_serializing_if = "Option::is_none")]
    pub(super) request_state: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) task: Option<TaskParam>,
}

/// `params.task` (2025-11-25): run the call as a task, kept this long when given.
#[derive(Serialize)]
pub(super) struct TaskParam {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) ttl: Option<u64>,
}

/// The arguments as a parsed object, or as the exact text the caller had.
#[derive(Serialize)]
#[serde(untagged)]
pub(super) enum ArgumentsView<'a> {
    /// Written from the parsed object.
    Map(&'a Map<String, Value>),
    /// Written as given.
    Text(&'a RawValue),
}

/// A request's `_meta` written from its parts, borrowed: the progress token, in the 2026
/// era the version, capabilities and client info (the keys and order of
/// [`Framing::meta`]), then the caller's other keys, except those already written.
pub(super) struct MetaView<'a> {
    pub(super) progress_token: &'a RequestId,
    pub(super) stateless: Option<(&'a str, &'a Identity)>,
    pub(super) extra: Option<&'a Map<String, Value>>,
    pub(super) raw: &'a [(&'a str, Box<RawValue>)],
}

impl MetaView<'_> {
    /// Whether `key` was written before the caller's keys.
    fn written(&self, key: &str) -> bool {
        key == meta::PROGRESS_TOKEN
            || (self.stateless.is_some()
                && matches!(
                    key,
                    meta::PROTOCOL_VERSION | meta::CLIENT_CAPABILITIES | meta::CLIENT_INFO
                ))
    }
}

impl Serialize for MetaView<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry(meta::PROGRESS_TOKEN, self.progress_token)?;
        if let Some((version, identity)) = self.stateless {
            map.serialize_entry(meta::PROTOCOL_VERSION, version)?;
            map.serialize_entry(meta::CLIENT_CAPABILITIES, identity.call_capabilities_json())?;
            map.serialize_entry(meta::CLIENT_INFO, identity.info_json())?;
        }
        for (key, value) in self.extra.into_iter().flatten() {
            if !self.written(key) {
                map.serialize_entry(key, value)?;
            }
        }
        for (key, value) in self.raw {
            if !self.written(key) {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}
