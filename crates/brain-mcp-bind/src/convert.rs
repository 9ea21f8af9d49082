//! Converting an MCP `tools/call` result (read and checked by the client core) into
//! Brain's output.

use brain_mcp_proto::mcp::{CallToolResult, ContentBlock as McpBlock};

use brain_tools_core::{ContentBlock, JsonText, ToolOutput};
use serde_json::value::RawValue;

/// Why a result cannot be turned into Brain output: which content block, and what is
/// wrong with it. The server's words it carries (a type, a media type, a parser's
/// complaint) are cut and redacted where the message is made (`driver::safe`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ConvertError {
    /// A content block Brain does not carry (audio, resource link, embedded resource,
    /// unknown): its index and its type, as sent.
    Unsupported {
        /// Its index in `content`.
        index: usize,
        /// Its type.
        kind: String,
    },
    /// A content block that is malformed: its index, and how.
    Malformed {
        /// Its index in `content`.
        index: usize,
        /// How.
        how: Malformed,
    },
}

/// How a content block is malformed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Malformed {
    /// An image whose `mimeType` is not `image/...` (as sent).
    NotImageType(String),
    /// An image with no data.
    EmptyImage,
    /// An image whose data is not base64.
    NotBase64,
    /// A block without a type.
    NoType,
    /// A block of a type MCP defines that does not parse as one: its type, and the
    /// parser's words.
    Block {
        /// Its type.
        kind: String,
        /// What the parse said.
        detail: String,
    },
}

impl std::fmt::Display for ConvertError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unsupported { index, kind } => write!(
                f,
                "content[{index}] has type {kind:?}; Brain carries only text, image and \
                 structured results"
            ),
            Self::Malformed { index, how } => match how {
                Malformed::NotImageType(mime) => write!(
                    f,
                    "content[{index}]: an image block's mimeType must be image/..., not {mime:?}"
                ),
                Malformed::EmptyImage => write!(f, "content[{index}]: the image data is empty"),
                Malformed::NotBase64 => {
                    write!(f, "content[{index}]: the image data is not valid base64")
                }
                Malformed::NoType => write!(f, "content[{index}] has no type"),
                Malformed::Block { kind, detail } => {
                    write!(f, "content[{index}] is a malformed {kind} block: {detail}")
                }
            },
        }
    }
}

/// Converts a `tools/call` result the core has read and checked.
///
/// What the tool returned is kept as it is; the text copy of a structured value is added
/// by the pipeline after the output limit (see `brain_tools_core::ToolOutput`).
pub(crate) fn convert(result: CallToolResult) -> Result<ToolOutput, ConvertError> {
    let mut content = Vec::with_capacity(result.content.len() + 1);
    for (index, block) in result.content.iter().enumerate() {
        content.push(block_of(index, block)?);
    }
    Ok(ToolOutput::new(
        content,
        result.structured_content.map(JsonText::from_raw),
        result.is_error == Some(true),
    ))
}

/// Block types MCP defines; one of these that does not parse is malformed, not unknown.
const KNOWN_TYPES: [&str; 5] = ["text", "image", "audio", "resource_link", "resource"];

/// Converts one content block.
pub(crate) fn block_of(index: usize, block: &McpBlock) -> Result<ContentBlock, ConvertError> {
    match block {
        McpBlock::Text(t) => Ok(ContentBlock::text(t.text.clone())),
        McpBlock::Image(image) => {
            let malformed = |how| ConvertError::Malformed { index, how };
            if !is_image_type(&image.mime_type) {
                let mime = image.mime_type.clone();
                return Err(malformed(Malformed::NotImageType(mime)));
            }
            match image.decode_data() {
                Ok(bytes) if !bytes.is_empty() => {}
                Ok(_) => return Err(malformed(Malformed::EmptyImage)),
                Err(_) => return Err(malformed(Malformed::NotBase64)),
            }
            Ok(ContentBlock::Image {
                data: image.data.clone(),
                mime_type: image.mime_type.clone(),
            })
        }
        McpBlock::Unknown(raw) => {
            let kind = block.type_name();
            if kind.is_empty() {
                let how = Malformed::NoType;
                return Err(ConvertError::Malformed { index, how });
            }
            if KNOWN_TYPES.contains(&kind.as_str()) {
                let detail = why_malformed(&kind, raw);
                let how = Malformed::Block { kind, detail };
                return Err(ConvertError::Malformed { index, how });
            }
            Err(ConvertError::Unsupported { index, kind })
        }
        other => Err(ConvertError::Unsupported {
            index,
            kind: other.type_name(),
        }),
    }
}

/// What the typed parse of a block of known type `kind` says is wrong with it.
fn why_malformed(kind: &str, raw: &RawValue) -> String {
    use brain_mcp_proto::mcp::{EmbeddedResource, ImageContent, ResourceLink, TextContent};
    let text = raw.get();
    let error = match kind {
        "text" => serde_json::from_str::<TextContent>(text).err(),
        "image" | "audio" => serde_json::from_str::<ImageContent>(text).err(),
        "resource_link" => serde_json::from_str::<ResourceLink>(text).err(),
        _ => serde_json::from_str::<EmbeddedResource>(text).err(),
    };
    error.map_or_else(
        || "its members do not fit the type".to_owned(),
        |e| e.to_string(),
    )
}

/// `image/<subtype>` (any case, parameters allowed).
fn is_image_type(mime_type: &str) -> bool {
    let essence = mime_type.split(';').next().unwrap_or_default().trim();
    let Some((kind, subtype)) = essence.split_once('/') else {
        return false;
    };
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    kind.eq_ignore_ascii_case("image") && token(subtype)
}

#[cfg(test)]
mod tests {
    use super::*;
    use brain_mcp_proto::client::{Framing, check_result, read_result};

    /// A result as the core reads and checks it in a handshake-era session, converted.
    fn output(json: &str) -> Result<ToolOutput, ConvertError> {
        let raw = RawValue::from_string(json.to_owned()).expect("valid JSON");
        let result = read_result(&raw).expect("a result").expect("complete");
        let result = check_result(result, &Framing::before_session()).expect("checked");
        convert(result)
    }

    #[test]
    fn text_image_and_error_flag() {
        let out = output(
            r#"{"content":[{"type":"text","text":"hi"},{"type":"image","data":"aGk=","mimeType":"image/png"}],"isError":true}"#,
        )
        .expect("converts");
        assert_eq!(
            out.content,
            vec![
                ContentBlock::text("hi"),
                ContentBlock::Image {
                    data: "aGk=".into(),
                    mime_type: "image/png".into()
                }
            ]
        );
        assert!(out.is_error);
    }

    #[test]
    fn structured_content_is_kept_as_sent() {
        let out = output(r#"{"content":[],"structuredContent":{"sum": 3.000000000000000000001}}"#)
            .expect("converts");
        assert!(out.content.is_empty(), "the pipeline adds the text copy");
        let text = out.structured_content.as_ref().map(JsonText::as_str);
        assert_eq!(text, Some(r#"{"sum": 3.000000000000000000001}"#));
        let out = output(r#"{"content":[],"structuredContent":null}"#).expect("converts");
        assert_eq!(out.structured_content, None);
    }

    #[test]
    fn other_blocks_are_unsupported() {
        for block in [
            r#"{"type":"audio","data":"aGk=","mimeType":"audio/wav"}"#,
            r#"{"type":"resource_link","uri":"file:///x","name":"x"}"#,
            r#"{"type":"resource","resource":{"uri":"file:///x","text":"t"}}"#,
            r#"{"type":"hologram","beam":1}"#,
        ] {
            let err = output(&format!(r#"{{"content":[{block}]}}"#)).expect_err("unsupported");
            assert!(
                matches!(&err, ConvertError::Unsupported { index: 0, .. })
                    && err.to_string().starts_with("content[0] has type"),
                "{err:?}"
            );
        }
    }

    #[test]
    fn malformed_blocks_of_known_types_are_protocol_errors() {
        for (block, says) in [
            (r#"{"type":"text"}"#, "malformed text block"),
            (r#"{"type":"text","text":5}"#, "malformed text block"),
            (r#"{"type":"image","data":"aGk="}"#, "malformed image block"),
            (
                r#"{"type":"audio","data":5,"mimeType":"audio/wav"}"#,
                "malformed audio block",
            ),
            (
                r#"{"type":"resource_link","uri":"file:///x"}"#,
                "malformed resource_link block",
            ),
            (
                r#"{"type":"image","data":"***","mimeType":"image/png"}"#,
                "not valid base64",
            ),
            (
                r#"{"type":"image","data":"","mimeType":"image/png"}"#,
                "image data is empty",
            ),
            (
                r#"{"type":"image","data":"aGk=","mimeType":"text/html"}"#,
                "mimeType must be image/",
            ),
            (
                r#"{"type":"image","data":"aGk=","mimeType":"application/x-msdownload"}"#,
                "mimeType must be image/",
            ),
            (
                r#"{"type":"image","data":"aGk=","mimeType":""}"#,
                "mimeType must be image/",
            ),
            (
                r#"{"type":"image","data":"aGk=","mimeType":"image/"}"#,
                "mimeType must be image/",
            ),
            (r#"{"data":"aGk="}"#, "has no type"),
        ] {
            let err = output(&format!(r#"{{"content":[{block}]}}"#)).expect_err("malformed");
            assert!(
                matches!(&err, ConvertError::Malformed { index: 0, .. })
                    && err.to_string().contains(says),
                "{block}: {err:?}"
            );
        }
        let ok = output(
            r#"{"content":[{"type":"image","data":"aGk=","mimeType":"IMAGE/SVG+XML; charset=utf-8"}]}"#,
        );
        assert!(ok.is_ok(), "{ok:?}");
    }
}
