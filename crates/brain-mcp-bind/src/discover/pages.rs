//! Reading every page of `tools/list` and keeping only what was asked for.

use brain_mcp_proto::client::{Framing, listing};
use brain_mcp_proto::mcp::Tool;
use brain_mcp_proto::text::{FRAGMENT_LIMIT, cut};

use crate::text::MAX_HINT_NAME;

/// Names kept for "did you mean" hints; a longer list is not searched further.
const MAX_NAMES_KEPT: usize = 10_000;
/// Tools kept whole when every tool is wanted (listing a server).
pub(super) const MAX_LISTED: usize = 10_000;
/// Bytes of tool definitions kept whole when every tool is wanted (names, descriptions
/// and schemas): a server paginating large tools cannot make a listing hold more.
const MAX_LISTED_BYTES: usize = 64 << 20;
/// Tools hidden for invalid headers that get a warning line each; the rest are counted.
const MAX_HIDDEN_REPORTED: usize = 100;

/// Which tools to keep whole.
#[derive(Debug)]
pub(super) enum Wanted {
    /// These names, in this order (the first listing of a name wins).
    Named(Vec<String>),
    /// Every tool offered, up to [`MAX_LISTED`].
    All,
}

/// What the pages of `tools/list` yielded, kept small: only wanted tools are kept whole.
#[derive(Debug)]
pub(super) struct Collected {
    wanted: Wanted,
    /// With [`Wanted::Named`], the first listing of each name, indexed like the names;
    /// with [`Wanted::All`], every tool in order.
    pub(super) found: Vec<Option<Tool>>,
    /// Names of the offered tools, for suggestions (at most [`MAX_NAMES_KEPT`], none
    /// longer than [`MAX_HINT_NAME`] bytes: no binding could name those).
    pub(super) names: Vec<String>,
    /// Tools not offered for invalid `x-mcp-header` annotations: name and reason
    /// (at most [`MAX_HIDDEN_REPORTED`]).
    pub(super) hidden: Vec<(String, String)>,
    /// How many tools were not offered in all.
    pub(super) hidden_total: usize,
    /// How many tools the server listed in all.
    pub(super) total: usize,
    /// How many offered tools were not kept because [`MAX_LISTED`] or
    /// [`MAX_LISTED_BYTES`] was reached.
    pub(super) dropped: usize,
    /// Bytes of the tools kept with [`Wanted::All`].
    kept_bytes: usize,
}

impl Collected {
    pub(super) fn new(wanted: Wanted) -> Self {
        let found = match &wanted {
            Wanted::Named(names) => names.iter().map(|_| None).collect(),
            Wanted::All => Vec::new(),
        };
        Self {
            wanted,
            found,
            names: Vec::new(),
            hidden: Vec::new(),
            hidden_total: 0,
            total: 0,
            dropped: 0,
            kept_bytes: 0,
        }
    }

    /// Takes in one page listed in `framing`: tools the core says may not be offered
    /// (an invalid `x-mcp-header` annotation in the 2026 era) are counted, wanted tools
    /// are kept.
    pub(super) fn add_page(&mut self, framing: &Framing, tools: Vec<Tool>) {
        for tool in tools {
            self.total += 1;
            if let Err(problem) = listing::offered(framing, &tool) {
                self.hidden_total += 1;
                if self.hidden.len() < MAX_HIDDEN_REPORTED && tool.name.len() <= MAX_HINT_NAME {
                    let problem = cut(&problem.to_string(), FRAGMENT_LIMIT).into_owned();
                    self.hidden.push((tool.name, problem));
                }
                continue;
            }
            if self.names.len() < MAX_NAMES_KEPT && tool.name.len() <= MAX_HINT_NAME {
                self.names.push(tool.name.clone());
            }
            match &self.wanted {
                Wanted::Named(names) => {
                    if let Some(i) = names.iter().position(|n| *n == tool.name)
                        && self.found[i].is_none()
                    {
                        self.found[i] = Some(tool);
                    }
                }
                Wanted::All => {
                    let size = size_of(&tool);
                    if self.found.len() < MAX_LISTED
                        && self.kept_bytes.saturating_add(size) <= MAX_LISTED_BYTES
                    {
                        self.kept_bytes += size;
                        self.found.push(Some(tool));
                    } else {
                        self.dropped += 1;
                    }
                }
            }
        }
    }

    /// Notes for the operator about tools not offered (or not kept).
    pub(super) fn warnings(&self) -> Vec<String> {
        let mut warnings: Vec<String> = self
            .hidden
            .iter()
            .map(|(name, problem)| {
                format!(
                    "tool {name:?} is not offered: its input schema has an invalid x-mcp-header annotation ({problem})"
                )
            })
            .collect();
        if self.hidden_total > self.hidden.len() {
            warnings.push(format!(
                "{} more tools are not offered for invalid x-mcp-header annotations",
                self.hidden_total - self.hidden.len()
            ));
        }
        if self.dropped > 0 {
            warnings.push(format!(
                "the server offers {} more tools than listed (at most {MAX_LISTED} tools and \
                 {} MiB of definitions are kept)",
                self.dropped,
                MAX_LISTED_BYTES >> 20
            ));
        }
        warnings
    }
}

/// About how many bytes a tool holds: the length of its JSON (icons and metadata count).
fn size_of(tool: &Tool) -> usize {
    serde_json::to_vec(tool).map_or(usize::MAX, |json| json.len())
}
