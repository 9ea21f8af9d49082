//! Serde machinery shared by the MCP types.
//!
//! MCP objects are open: peers add members we do not model, and newer
//! revisions add more. Every object type therefore keeps unknown members in
//! an `extra` map and writes them back, so decoding and re-encoding loses
//! nothing. `#[serde(flatten)]` cannot be used for this because it buffers
//! values and so breaks verbatim [`RawValue`](serde_json::value::RawValue)
//! fields; the [`wire_struct!`] macro writes the visitor by hand instead.
//!
//! Field modes:
//! - `req`: required member; absent is an error.
//! - `opt`: `Option<T>`; absent or `null` is `None`. A `null` is remembered in
//!   `extra` so it is written back as `null`.
//! - `def`: `T: Default`; absent is the default; always written.
//!
//! A struct declared `pub struct Name tagged "type" { .. }` is one case of a union
//! whose tag member names the case: the union reads and writes the tag, so the struct
//! skips it rather than keeping it in `extra`.

use std::borrow::Cow;

use serde::Deserialize;

/// A map key that borrows from the input when it has no escapes.
#[derive(Deserialize)]
pub(crate) struct Key<'a>(#[serde(borrow)] pub(crate) Cow<'a, str>);

/// Defines an open MCP object type with hand-written serde impls.
macro_rules! wire_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident $(tagged $tag:literal)? {
            $(
                $(#[$fmeta:meta])*
                $mode:ident $field:ident : $ty:ty = $wire:literal,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone)]
        #[non_exhaustive]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
            /// Members this crate does not model, kept so re-encoding loses nothing.
            pub extra: serde_json::Map<String, serde_json::Value>,
        }

        impl $name {
            /// True when `key` is a modelled member that will be written from its field.
            #[allow(unused_variables)] // a struct with no modelled member never reads `key`
            fn wire_field_is_set(&self, key: &str) -> bool {
                match key {
                    $( $wire => $crate::wire::wire_is_set!($mode, self.$field), )*
                    _ => false,
                }
            }

            /// Writes every member into an already-open map.
            #[allow(dead_code)] // not every wire type needs every generated helper
            pub(crate) fn serialize_members<M: serde::ser::SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
                $( $crate::wire::wire_ser!($mode, map, self.$field, $wire); )*
                for (k, v) in &self.extra {
                    if !self.wire_field_is_set(k) {
                        map.serialize_entry(k, v)?;
                    }
                }
                Ok(())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap as _;
                let mut map = serializer.serialize_map(None)?;
                self.serialize_members(&mut map)?;
                map.end()
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $name;

                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("a ", stringify!($name), " object"))
                    }

                    #[allow(unused_mut)] // mutated only when the struct has members
                    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut access: A) -> Result<$name, A::Error> {
                        $( let mut $field: Option<$ty> = None; )*
                        let mut extra = serde_json::Map::new();
                        $( let mut tagged = false; let _ = $tag; )?
                        while let Some($crate::wire::Key(key)) = access.next_key()? {
                            match &*key {
                                $(
                                    $wire => {
                                        if $field.is_some() {
                                            return Err(serde::de::Error::duplicate_field($wire));
                                        }
                                        let value: $ty = access.next_value()?;
                                        $crate::wire::wire_null!($mode, value, extra, $wire);
                                        $field = Some(value);
                                    }
                                )*
                                $( $tag => {
                                    // Read by the union; twice is as ambiguous as any repeat.
                                    if std::mem::replace(&mut tagged, true) {
                                        return Err(serde::de::Error::duplicate_field($tag));
                                    }
                                    access.next_value::<serde::de::IgnoredAny>()?;
                                } )?
                                _ => {
                                    let value: serde_json::Value = access.next_value()?;
                                    extra.insert(key.into_owned(), value);
                                }
                            }
                        }
                        Ok($name {
                            $( $field: $crate::wire::wire_finish!($mode, $field, $wire), )*
                            extra,
                        })
                    }
                }
                deserializer.deserialize_map(V)
            }
        }
    };
}

macro_rules! wire_is_set {
    (req, $v:expr) => {
        true
    };
    (def, $v:expr) => {
        true
    };
    (opt, $v:expr) => {
        $v.is_some()
    };
}

macro_rules! wire_ser {
    (req, $map:ident, $v:expr, $wire:literal) => {
        $map.serialize_entry($wire, &$v)?
    };
    (def, $map:ident, $v:expr, $wire:literal) => {
        $map.serialize_entry($wire, &$v)?
    };
    (opt, $map:ident, $v:expr, $wire:literal) => {
        if let Some(v) = &$v {
            $map.serialize_entry($wire, v)?;
        }
    };
}

macro_rules! wire_null {
    (opt, $value:ident, $extra:ident, $wire:literal) => {
        if $value.is_none() {
            $extra.insert($wire.to_owned(), serde_json::Value::Null);
        }
    };
    ($mode:ident, $value:ident, $extra:ident, $wire:literal) => {};
}

macro_rules! wire_finish {
    (req, $slot:ident, $wire:literal) => {
        match $slot {
            Some(v) => v,
            None => return Err(serde::de::Error::missing_field($wire)),
        }
    };
    (def, $slot:ident, $wire:literal) => {
        $slot.unwrap_or_default()
    };
    (opt, $slot:ident, $wire:literal) => {
        $slot.flatten()
    };
}

/// Defines an open string enumeration: known values plus `Other(String)`.
macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $wire:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A value this crate does not know, kept as sent.
            Other(String),
        }

        impl $name {
            /// The wire spelling.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $wire, )*
                    Self::Other(s) => s,
                }
            }

            /// Maps a wire string to a value; unknown strings become `Other`.
            pub fn from_wire(s: &str) -> Self {
                match s {
                    $( $wire => Self::$variant, )*
                    other => Self::Other(other.to_owned()),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let $crate::wire::Key(s) = $crate::wire::Key::deserialize(deserializer)?;
                Ok(Self::from_wire(&s))
            }
        }
    };
}

pub(crate) use {open_enum, wire_finish, wire_is_set, wire_null, wire_ser, wire_struct};
