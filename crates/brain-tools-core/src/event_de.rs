//! Reading a [`ToolEvent`] back. serde's derive for an internally tagged enum buffers the
//! members first, and buffered members lose the exact text of numbers and structured
//! values; so the event is read in one pass into its members, then built by its tag.

use serde::Deserialize;
use serde::de::{self, Deserializer};

use crate::event::{ContentBlock, ProgressEvent, ToolError, ToolEvent, ToolResultEvent};
use crate::exact::{ExactNumber, JsonText};

/// Every member either kind of event has.
#[derive(serde::Deserialize)]
struct Members {
    #[serde(rename = "type")]
    kind: String,
    call_id: String,
    progress: Option<ExactNumber>,
    #[serde(default)]
    total: Option<ExactNumber>,
    #[serde(default)]
    message: Option<String>,
    is_error: Option<bool>,
    content: Option<Vec<ContentBlock>>,
    #[serde(default)]
    structured_content: Option<JsonText>,
    #[serde(default)]
    unknown_outcome: Option<bool>,
    #[serde(default)]
    error: Option<ToolError>,
}

impl<'de> Deserialize<'de> for ToolEvent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let m = Members::deserialize(deserializer)?;
        match m.kind.as_str() {
            "tool.progress" => Ok(Self::Progress(ProgressEvent {
                call_id: m.call_id,
                progress: m
                    .progress
                    .ok_or_else(|| de::Error::missing_field("progress"))?,
                total: m.total,
                message: m.message,
            })),
            "tool.result" => Ok(Self::Result(ToolResultEvent {
                call_id: m.call_id,
                is_error: m
                    .is_error
                    .ok_or_else(|| de::Error::missing_field("is_error"))?,
                content: m
                    .content
                    .ok_or_else(|| de::Error::missing_field("content"))?,
                structured_content: m.structured_content,
                unknown_outcome: m.unknown_outcome,
                error: m.error,
            })),
            other => Err(de::Error::unknown_variant(
                other,
                &["tool.progress", "tool.result"],
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_read_back_with_every_digit() {
        for text in [
            r#"{"type":"tool.progress","call_id":"c","progress":0.1000000000000000055511151231257827,"total":1e400}"#,
            r#"{"type":"tool.result","call_id":"c","is_error":false,"content":[{"type":"text","text":"t"}],"structured_content":{"n":123456789012345678901234567890}}"#,
            r#"{"type":"tool.result","call_id":"c","is_error":true,"content":[],"unknown_outcome":true,"error":{"kind":"timeout","message":"m"}}"#,
        ] {
            let event: ToolEvent = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_string(&event).unwrap(), text);
        }
    }

    #[test]
    fn a_missing_member_or_unknown_type_is_refused_by_name() {
        let no_progress =
            serde_json::from_str::<ToolEvent>(r#"{"type":"tool.progress","call_id":"c"}"#);
        assert!(no_progress.unwrap_err().to_string().contains("progress"));
        let odd = serde_json::from_str::<ToolEvent>(r#"{"type":"tool.other","call_id":"c"}"#);
        assert!(odd.unwrap_err().to_string().contains("tool.other"));
    }
}
