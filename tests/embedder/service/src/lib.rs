//! A service's own types, of the shapes serde reads through its buffer (internally
//! tagged, untagged, flattened). serde_json's `arbitrary_precision` breaks each of them
//! when it holds an `f64`; depending on brain-mcp-bind must not turn that feature on.

use serde::Deserialize;

/// An internally tagged enum.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(tag = "kind")]
pub enum Reading {
    /// A temperature.
    Temperature {
        /// Degrees.
        celsius: f64,
    },
}

/// An untagged enum.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Amount {
    /// A plain number.
    Plain(f64),
    /// A number with its unit.
    WithUnit {
        /// The number.
        value: f64,
        /// Its unit.
        unit: String,
    },
}

/// A struct with flattened members.
#[derive(Debug, Deserialize, PartialEq)]
pub struct Order {
    /// Its id.
    pub id: String,
    /// The price, flattened in.
    #[serde(flatten)]
    pub price: Price,
}

/// The flattened part.
#[derive(Debug, Deserialize, PartialEq)]
pub struct Price {
    /// The amount.
    pub amount: f64,
}
