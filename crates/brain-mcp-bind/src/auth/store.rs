//! The token store's contract, safe across processes: a load returns the row's version,
//! a save is a compare-and-swap on it, and a refresh is taken under a lease that expires
//! (so a holder that died blocks no one for long). docs/authorization.md ("A token store
//! shared by processes") says how the authorizer uses it.

use std::time::{Duration, SystemTime};

use async_trait::async_trait;

use brain_tools_core::Secret;

/// How long a lease lasts unless the store says otherwise: longer than a token request
/// may take (its step deadline is 10 s), so a live holder keeps it to the end.
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(30);

/// The tokens of one principal at one server, as a host keeps them between runs.
/// `Debug` shows neither token.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredTokens {
    /// The authorization server that issued them: a refresh token goes back there only.
    pub issuer: String,
    /// The access token, if still worth keeping.
    pub access_token: Option<Secret>,
    /// When the access token expires, if it does.
    pub expires_at: Option<SystemTime>,
    /// The refresh token, if any.
    pub refresh_token: Option<Secret>,
    /// The scope granted, if known.
    pub scope: Option<String>,
}

impl StoredTokens {
    /// Tokens from `issuer`, none yet.
    pub fn new(issuer: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            access_token: None,
            expires_at: None,
            refresh_token: None,
            scope: None,
        }
    }
}

/// Which tokens a row holds: whose (none for machine tokens, which every principal using
/// the same client shares), at which server, got with which client. `client` is a digest
/// of the client's identity (issuer, id, scopes, a digest of its proof): never a secret.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub struct TokenKey {
    /// The principal (tenant, user), or none for tokens of the client itself.
    pub principal: Option<String>,
    /// The MCP server's canonical URL.
    pub server_url: String,
    /// A digest naming the client (never a secret).
    pub client: String,
}

impl TokenKey {
    /// The key of `principal`'s tokens at `server_url` got with the client `client`.
    pub fn new(principal: Option<&str>, server_url: &str, client: &str) -> Self {
        Self {
            principal: principal.map(str::to_owned),
            server_url: server_url.to_owned(),
            client: client.to_owned(),
        }
    }

    /// The key as one string, unambiguous (each part length-prefixed): what a store
    /// indexes or binds a row's encryption to.
    pub fn encoded(&self) -> String {
        let principal = self
            .principal
            .as_deref()
            .map_or_else(|| "-".to_owned(), |p| format!("{}:{p}", p.len()));
        format!(
            "{principal}|{}:{}|{}:{}",
            self.server_url.len(),
            self.server_url,
            self.client.len(),
            self.client
        )
    }
}

/// A row's version: it changes with every save. A row never saved has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version(u64);

impl Version {
    /// The version numbered `n` (a store's own numbering: only equality matters).
    pub fn new(n: u64) -> Self {
        Self(n)
    }

    /// Its number.
    pub fn get(self) -> u64 {
        self.0
    }
}

/// Tokens as loaded, with the version a save must name to replace them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Versioned {
    /// The row's version.
    pub version: Version,
    /// The tokens.
    pub tokens: StoredTokens,
}

impl Versioned {
    /// `tokens` at `version`.
    pub fn new(version: Version, tokens: StoredTokens) -> Self {
        Self { version, tokens }
    }
}

/// What asking for a key's lease got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Lease {
    /// This holder has it until its ttl passes or it is released.
    Granted,
    /// Another holder has it until `until` (then anyone may take it over).
    Held {
        /// When the other holder's lease expires.
        until: SystemTime,
    },
}

/// Why a store could not do what was asked. `Display` is the message (never a secret:
/// no token, key or password).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct StoreError {
    kind: StoreErrorKind,
    message: String,
}

/// The kinds of [`StoreError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// A save named a version that is not the row's (another process saved first).
    Conflict,
    /// The store did not answer in time.
    Timeout,
    /// The store cannot be reached, or refused the operation.
    Unavailable,
    /// A row cannot be read: sealed with a key not given, or corrupt.
    Unreadable,
    /// The store's settings cannot be used (a variable unset, a key or URL malformed).
    Config,
}

impl StoreErrorKind {
    /// Its name: `conflict`, `timeout`, `unavailable`, `unreadable`, `config`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Conflict => "conflict",
            Self::Timeout => "timeout",
            Self::Unavailable => "unavailable",
            Self::Unreadable => "unreadable",
            Self::Config => "config",
        }
    }
}

impl StoreError {
    /// A failure of `kind`, saying `message` (never a secret).
    pub fn new(kind: StoreErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// A save's version was not the row's.
    pub fn conflict() -> Self {
        Self::new(
            StoreErrorKind::Conflict,
            "the tokens were saved by another holder first",
        )
    }

    /// Its kind.
    pub fn kind(&self) -> StoreErrorKind {
        self.kind
    }
}

/// Where a host keeps tokens, shared by every process that uses it. Brain loads a row
/// before it asks for a token and takes the row's lease before it refreshes: one holder
/// renews, the others wait for its save (or take over once the lease has expired), and a
/// rotated refresh token is saved before the access token that came with it is sent.
///
/// The contract every store keeps:
/// - [`load`](Self::load) returns the tokens with their version, or `None` when none
///   were saved;
/// - [`save`](Self::save) replaces them only if the row's version is still `expected`
///   (`None`: nothing saved yet), returning the new version, else fails with
///   [`StoreErrorKind::Conflict`] and changes nothing;
/// - [`lease`](Self::lease) grants the key's lease to `holder` for `ttl` if no other
///   holder has an unexpired one (a holder asking again extends its own), else says
///   until when it is held; [`release`](Self::release) ends `holder`'s lease (another's
///   is left alone). A lease does not stop a save: the version does.
#[async_trait]
pub trait TokenStore: Send + Sync + 'static {
    /// The tokens kept under `key`, with their version.
    async fn load(&self, key: &TokenKey) -> Result<Option<Versioned>, StoreError>;
    /// Keeps `tokens` under `key` if its version is `expected`; the new version.
    async fn save(
        &self,
        key: &TokenKey,
        expected: Option<Version>,
        tokens: &StoredTokens,
    ) -> Result<Version, StoreError>;
    /// `key`'s lease for `holder`, for `ttl`, unless another holder has it.
    async fn lease(&self, key: &TokenKey, holder: &str, ttl: Duration)
    -> Result<Lease, StoreError>;
    /// Ends `holder`'s lease of `key`, if it has it.
    async fn release(&self, key: &TokenKey, holder: &str) -> Result<(), StoreError>;
    /// How long a lease is asked for: longer than a token request takes.
    fn lease_ttl(&self) -> Duration {
        DEFAULT_LEASE_TTL
    }
}
