//! Content blocks of tool results.

use std::borrow::Cow;

use serde::de::Error as _;
use serde::ser::SerializeMap as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::wire::{Key, wire_struct};

use super::{Annotations, Icon, Meta};

/// One block of tool output.
///
/// A block whose `type` this crate does not know, or that is malformed for
/// its type, is kept verbatim as [`ContentBlock::Unknown`]: decoding a
/// result never fails because of one odd block.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ContentBlock {
    /// `text`.
    Text(TextContent),
    /// `image` (base64 data).
    Image(ImageContent),
    /// `audio` (base64 data).
    Audio(AudioContent),
    /// `resource_link`.
    ResourceLink(ResourceLink),
    /// `resource` (embedded contents).
    Resource(EmbeddedResource),
    /// Anything else, byte for byte.
    Unknown(Box<RawValue>),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent {
            text: text.into(),
            annotations: None,
            meta: None,
            extra: Default::default(),
        })
    }

    /// The wire `type` of the block (for `Unknown`, whatever it says, or `""`).
    pub fn type_name(&self) -> String {
        match self {
            Self::Text(_) => "text".into(),
            Self::Image(_) => "image".into(),
            Self::Audio(_) => "audio".into(),
            Self::ResourceLink(_) => "resource_link".into(),
            Self::Resource(_) => "resource".into(),
            Self::Unknown(raw) => peek_type(raw.get()).unwrap_or_default().into_owned(),
        }
    }
}

wire_struct! {
    /// A text block.
    pub struct TextContent tagged "type" {
        /// The text.
        req text: String = "text",
        /// Hints.
        opt annotations: Option<Annotations> = "annotations",
        /// Block metadata.
        opt meta: Option<Meta> = "_meta",
    }
}

wire_struct! {
    /// An image or audio block.
    pub struct ImageContent tagged "type" {
        /// Base64 data, without a `data:` prefix.
        req data: String = "data",
        /// MIME type.
        req mime_type: String = "mimeType",
        /// Hints.
        opt annotations: Option<Annotations> = "annotations",
        /// Block metadata.
        opt meta: Option<Meta> = "_meta",
    }
}

/// An audio block has the same members as an image block.
pub type AudioContent = ImageContent;

impl ImageContent {
    /// Decodes the base64 payload.
    pub fn decode_data(&self) -> Result<Vec<u8>, base64::DecodeError> {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.decode(self.data.as_bytes())
    }
}

wire_struct! {
    /// A link to a resource.
    pub struct ResourceLink tagged "type" {
        /// The resource URI.
        req uri: String = "uri",
        /// Programmatic name.
        req name: String = "name",
        /// Display name.
        opt title: Option<String> = "title",
        /// Description.
        opt description: Option<String> = "description",
        /// MIME type.
        opt mime_type: Option<String> = "mimeType",
        /// Size in bytes.
        opt size: Option<u64> = "size",
        /// Hints.
        opt annotations: Option<Annotations> = "annotations",
        /// Icons.
        opt icons: Option<Vec<Icon>> = "icons",
        /// Metadata.
        opt meta: Option<Meta> = "_meta",
    }
}

wire_struct! {
    /// Resource contents embedded in a result.
    pub struct EmbeddedResource tagged "type" {
        /// The contents.
        req resource: ResourceContents = "resource",
        /// Hints (some servers put them inside `resource` instead; both are kept).
        opt annotations: Option<Annotations> = "annotations",
        /// Metadata.
        opt meta: Option<Meta> = "_meta",
    }
}

wire_struct! {
    /// Text or binary resource contents: exactly one of `text`/`blob` is expected.
    pub struct ResourceContents {
        /// The resource URI.
        req uri: String = "uri",
        /// MIME type.
        opt mime_type: Option<String> = "mimeType",
        /// Text contents.
        opt text: Option<String> = "text",
        /// Base64 binary contents.
        opt blob: Option<String> = "blob",
        /// Metadata.
        opt meta: Option<Meta> = "_meta",
    }
}

/// The block's type as a full parse reads it (`None` when it has none, or repeats it).
fn peek_type(text: &str) -> Option<Cow<'_, str>> {
    #[derive(Deserialize)]
    struct Peek<'a> {
        #[serde(borrow, rename = "type")]
        kind: Option<Key<'a>>,
    }
    serde_json::from_str::<Peek<'_>>(text)
        .ok()?
        .kind
        .map(|k| k.0)
}

/// The block's type to decode it by: read in place when the block starts with it, as
/// servers write it, else by [`peek_type`]. A repeated tag goes unseen here, but the
/// case then refuses it (its `tagged` form), and the block stays raw.
fn leading_type(text: &str) -> Option<Cow<'_, str>> {
    if let Some(rest) = text.strip_prefix("{\"type\":\"")
        && let Some((kind, after)) = rest.split_once('"')
        && !kind.contains('\\')
        && (after.starts_with(',') || after.starts_with('}'))
    {
        return Some(Cow::Borrowed(kind));
    }
    peek_type(text)
}

fn typed<'a, T: Deserialize<'a>>(text: &'a str) -> Option<T> {
    serde_json::from_str(text).ok()
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        let text = raw.get();
        if !text.starts_with('{') {
            return Err(D::Error::custom("a content block must be an object"));
        }
        // Each case skips the tag itself (`tagged "type"`).
        let block = match leading_type(text).as_deref() {
            Some("text") => typed(text).map(Self::Text),
            Some("image") => typed(text).map(Self::Image),
            Some("audio") => typed(text).map(Self::Audio),
            Some("resource_link") => typed(text).map(Self::ResourceLink),
            Some("resource") => typed(text).map(Self::Resource),
            _ => None,
        };
        Ok(block.unwrap_or(Self::Unknown(raw)))
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if let Self::Unknown(raw) = self {
            return raw.serialize(serializer);
        }
        let mut map = serializer.serialize_map(None)?;
        match self {
            Self::Text(v) => {
                map.serialize_entry("type", "text")?;
                v.serialize_members(&mut map)?;
            }
            Self::Image(v) => {
                map.serialize_entry("type", "image")?;
                v.serialize_members(&mut map)?;
            }
            Self::Audio(v) => {
                map.serialize_entry("type", "audio")?;
                v.serialize_members(&mut map)?;
            }
            Self::ResourceLink(v) => {
                map.serialize_entry("type", "resource_link")?;
                v.serialize_members(&mut map)?;
            }
            Self::Resource(v) => {
                map.serialize_entry("type", "resource")?;
                v.serialize_members(&mut map)?;
            }
            Self::Unknown(_) => {}
        }
        map.end()
    }
}
