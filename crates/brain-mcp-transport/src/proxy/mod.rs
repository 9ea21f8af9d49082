//! HTTP proxies: which destinations go through which proxy, read once when a client is
//! built ([`ProxyConfig`]), and the connector that reaches them (`connect`).
//!
//! The variables and their meaning are curl's (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`,
//! `NO_PROXY`, upper case first). hyper-util's `Matcher` reads the proxy URLs; `NO_PROXY`
//! is matched by `no_proxy.rs` (curl's rules, with Go's where curl has none). Three choices
//! are ours, all documented in `docs/transport.md`:
//! - A proxy named by the environment never carries loopback destinations (`localhost`,
//!   `*.localhost`, `127.0.0.0/8`, `::1`), as in Go's `ProxyFromEnvironment`: the
//!   environment names the machine's way out, which cannot reach this machine's loopback.
//!   An explicit [`ProxyConfig::url`] proxies whatever its no-proxy list does not exempt.
//! - A setting that cannot be used (a socks proxy, a value that is not a URL) is not
//!   skipped: for the environment, requests it would carry fail with a clear error
//!   (nothing is sent directly around a proxy someone asked for); an explicit URL fails
//!   when the client is built.
//! - In a CGI process (`REQUEST_METHOD` set), upper-case `HTTP_PROXY` is ignored, since a
//!   request's `Proxy:` header may have set it ("httpoxy").

mod connect;
mod no_proxy;

use std::env::VarError;
use std::fmt;
use std::net::IpAddr;

use brain_mcp_proto::text::Secrets;
use http::Uri;
use hyper_util::client::proxy::matcher::{Intercept, Matcher};

use no_proxy::NoProxy;

pub(crate) use connect::{ProxyConnector, ProxyError};

/// Which proxy an [`HttpClient`](crate::HttpClient) uses; see `docs/transport.md`.
///
/// `Debug` never shows credentials: a proxy URL is shown by its origin only.
#[derive(Clone, Default)]
pub struct ProxyConfig {
    source: Source,
    /// Replaces the no-proxy list of the source (see [`ProxyConfig::no_proxy`]).
    no_proxy: Option<String>,
}

#[derive(Clone, Default)]
enum Source {
    /// The process environment, read when the client is built.
    #[default]
    Env,
    /// Given variables, read as the environment would be.
    Vars(Vec<(String, String)>),
    /// No proxy.
    Off,
    /// This proxy for every destination the no-proxy list does not exempt.
    Url(String),
}

impl ProxyConfig {
    /// Proxies from the environment (the default): `HTTPS_PROXY`, `HTTP_PROXY`,
    /// `ALL_PROXY` and `NO_PROXY`, upper or lower case, read when the client is built.
    /// Loopback destinations never go through them.
    pub fn from_env() -> Self {
        Self::default()
    }

    /// Proxies from these variables instead of the process environment, with the same
    /// meaning: `[("HTTPS_PROXY", "http://proxy:3128"), ("NO_PROXY", ".internal")]`.
    pub fn from_vars<I, K, V>(vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let vars = vars
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        Self {
            source: Source::Vars(vars),
            no_proxy: None,
        }
    }

    /// No proxy: every destination is reached directly, whatever the environment says.
    pub fn none() -> Self {
        Self {
            source: Source::Off,
            no_proxy: None,
        }
    }

    /// This proxy (`http://[user:password@]host:port`, or `https://` for TLS to the
    /// proxy) for every destination, loopback included, except those
    /// [`no_proxy`](Self::no_proxy) lists. An unusable URL fails
    /// [`HttpClient::new`](crate::HttpClient::new).
    pub fn url(url: impl Into<String>) -> Self {
        Self {
            source: Source::Url(url.into()),
            no_proxy: None,
        }
    }

    /// Destinations reached directly, in `NO_PROXY` form: comma-separated host names
    /// (each matches itself and its subdomains; a leading `.` is allowed), IP addresses,
    /// CIDR blocks, or `*` for all. For proxies from the environment it replaces
    /// `NO_PROXY`.
    #[must_use]
    pub fn no_proxy(mut self, list: impl Into<String>) -> Self {
        self.no_proxy = Some(list.into());
        self
    }

    /// Resolves the setting into the rules a client applies to each destination.
    pub(crate) fn resolve(&self) -> Result<Proxies, InvalidProxy> {
        match &self.source {
            Source::Off => Ok(Proxies::none()),
            Source::Env => Ok(from_lookup(
                &|name| std::env::var(name),
                self.no_proxy.as_deref(),
            )),
            Source::Vars(vars) => {
                let get = |name: &str| {
                    vars.iter()
                        .rev()
                        .find(|(k, _)| k == name)
                        .map(|(_, v)| v.clone())
                        .ok_or(VarError::NotPresent)
                };
                Ok(from_lookup(&get, self.no_proxy.as_deref()))
            }
            Source::Url(url) => {
                check(url).map_err(|reason| InvalidProxy { reason })?;
                let matcher = Matcher::builder().all(url.trim()).build();
                Ok(Proxies {
                    matcher: Some(matcher),
                    no: NoProxy::parse(self.no_proxy.as_deref().unwrap_or_default()),
                    refused: [None, None],
                    exempt_loopback: false,
                    secrets: credentials([url.as_str()]),
                })
            }
        }
    }
}

impl fmt::Debug for ProxyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("ProxyConfig");
        match &self.source {
            Source::Env => s.field("source", &"environment"),
            Source::Off => s.field("source", &"none"),
            Source::Vars(vars) => {
                let names: Vec<&str> = vars.iter().map(|(k, _)| k.as_str()).collect();
                s.field("variables", &names)
            }
            Source::Url(url) => s.field("url", &shown(url)),
        };
        s.field("no_proxy", &self.no_proxy).finish()
    }
}

/// A proxy URL as it may be shown: its origin, never its credentials.
fn shown(url: &str) -> String {
    match url.trim().parse::<Uri>() {
        Ok(uri) if uri.host().is_some() => crate::origin::origin(&uri),
        _ => "<not a URL>".to_owned(),
    }
}

/// The rules a client applies to each destination.
pub(crate) struct Proxies {
    matcher: Option<Matcher>,
    /// Destinations reached directly (`NO_PROXY`, or the explicit list).
    no: NoProxy,
    /// Why the `http` (0) and `https` (1) proxy settings cannot be used, if they cannot.
    refused: [Option<String>; 2],
    /// Loopback destinations are always reached directly.
    exempt_loopback: bool,
    /// The proxies' credentials, in every form they are sent: never shown.
    secrets: Secrets,
}

/// How one destination is reached.
pub(crate) enum Route {
    /// Directly.
    Direct,
    /// Through this proxy: a CONNECT tunnel for `https`, forwarding for `http`.
    Via(Intercept),
    /// Not at all: the proxy setting that applies cannot be used (the reason names it).
    Refused(String),
}

/// Stands in for an unusable setting in the matcher, so that `NO_PROXY` still decides
/// which destinations it would have applied to. Never connected to.
const UNUSABLE: &str = "http://unusable-proxy.invalid:9";

impl Proxies {
    pub(crate) fn none() -> Self {
        Self {
            matcher: None,
            no: NoProxy::default(),
            refused: [None, None],
            exempt_loopback: true,
            secrets: Secrets::none(),
        }
    }

    /// The proxies' credentials: the password, `user:password` and its `Basic` form.
    pub(crate) fn secrets(&self) -> &Secrets {
        &self.secrets
    }

    /// How `dst` is reached.
    pub(crate) fn route(&self, dst: &Uri) -> Route {
        let Some(matcher) = &self.matcher else {
            return Route::Direct;
        };
        if self.exempt_loopback && dst.host().is_some_and(is_loopback) {
            return Route::Direct;
        }
        if self.no.matches(dst) {
            return Route::Direct;
        }
        let Some(intercept) = matcher.intercept(dst) else {
            return Route::Direct;
        };
        let https = dst.scheme_str() == Some("https");
        match &self.refused[usize::from(https)] {
            Some(reason) => Route::Refused(reason.clone()),
            None => Route::Via(intercept),
        }
    }
}

/// Whether `host` (as a URL holds it, IPv6 in brackets) is this machine's loopback.
pub(crate) fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => ip.is_loopback(),
        Ok(IpAddr::V6(ip)) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Err(_) => crate::resolve::is_localhost_name(bare),
    }
}

/// An explicit proxy URL this client cannot use. `Display` says why ("the proxy URL
/// ..."), never the URL, which may hold credentials.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the proxy URL {reason}")]
pub struct InvalidProxy {
    reason: &'static str,
}

/// Whether `value` is a proxy URL this client can use; the reason reads after "the proxy
/// URL" or a variable's name, and never repeats the value (it may hold credentials).
fn check(value: &str) -> Result<(), &'static str> {
    let uri: Uri = value
        .trim()
        .parse()
        .map_err(|_| "is not a URL (write http://host:port)")?;
    match uri.scheme_str().map(str::to_ascii_lowercase).as_deref() {
        None | Some("http" | "https") => {}
        Some(s) if s.starts_with("socks") => {
            return Err(
                "names a socks proxy, which is not supported: use an http:// or https:// proxy",
            );
        }
        Some(_) => return Err("has a scheme other than http:// or https://"),
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err("has no host (write http://host:port)");
    }
    // hyper-util reads the value itself; one it cannot read would silently mean "no proxy".
    let probe = Uri::from_static("http://probe.invalid/");
    if Matcher::builder()
        .http(value.trim())
        .build()
        .intercept(&probe)
        .is_none()
    {
        return Err("is not a URL this client can use (write http://host:port)");
    }
    Ok(())
}

/// The first of `names` that is set and not empty: its name and value (`None` when the
/// value is not valid UTF-8).
fn first(
    get: &dyn Fn(&str) -> Result<String, VarError>,
    names: &[&'static str],
) -> Option<(&'static str, Option<String>)> {
    names.iter().find_map(|&name| match get(name) {
        Ok(v) if v.trim().is_empty() => None,
        Ok(v) => Some((name, Some(v))),
        Err(VarError::NotUnicode(_)) => Some((name, None)),
        Err(VarError::NotPresent) => None,
    })
}

/// The rules the variables `get` reads give, `no_proxy` replacing `NO_PROXY`; a pure
/// function of the variables, so tests need not touch the process environment.
pub(crate) fn from_lookup(
    get: &dyn Fn(&str) -> Result<String, VarError>,
    no_proxy: Option<&str>,
) -> Proxies {
    let cgi = get("REQUEST_METHOD").is_ok();
    let http_names: &[&str] = if cgi {
        &["http_proxy"]
    } else {
        &["HTTP_PROXY", "http_proxy"]
    };
    let all = first(get, &["ALL_PROXY", "all_proxy"]);
    let http = first(get, http_names).or_else(|| all.clone());
    let https = first(get, &["HTTPS_PROXY", "https_proxy"]).or(all);
    if http.is_none() && https.is_none() {
        return Proxies::none();
    }
    let mut refused = [None, None];
    let no = match no_proxy {
        Some(list) => list.to_owned(),
        None => match first(get, &["NO_PROXY", "no_proxy"]) {
            Some((_, Some(list))) => list,
            Some((name, None)) => {
                // Unreadable exemptions: proxying everything could send internal traffic
                // out, going direct could bypass the proxy. Neither; say why.
                let reason = format!("{name} is not valid UTF-8");
                refused = [Some(reason.clone()), Some(reason)];
                String::new()
            }
            None => String::new(),
        },
    };
    let mut builder = Matcher::builder();
    let mut used = Vec::new();
    for (i, setting) in [http, https].into_iter().enumerate() {
        let Some((name, value)) = setting else {
            continue;
        };
        let usable = match value {
            Some(v) => check(&v)
                .map(|()| v)
                .map_err(|reason| format!("{name} {reason}")),
            None => Err(format!("{name} is not valid UTF-8")),
        };
        let value = match usable {
            Ok(v) => {
                used.push(v.trim().to_owned());
                v.trim().to_owned()
            }
            Err(reason) => {
                refused[i].get_or_insert(reason);
                UNUSABLE.to_owned()
            }
        };
        builder = if i == 0 {
            builder.http(value)
        } else {
            builder.https(value)
        };
    }
    Proxies {
        matcher: Some(builder.build()),
        no: NoProxy::parse(&no),
        refused,
        exempt_loopback: true,
        secrets: credentials(used.iter().map(String::as_str)),
    }
}

/// The credentials in proxy URLs, in every form they may be sent or echoed: the password
/// (percent-decoded), `user:password`, and the base64 of `Proxy-Authorization: Basic`.
/// A user name alone (no password) is a credential too.
fn credentials<'a>(urls: impl IntoIterator<Item = &'a str>) -> Secrets {
    let probe = Uri::from_static("http://probe.invalid/");
    let mut found = Vec::new();
    for url in urls {
        let Ok(uri) = url.trim().parse::<Uri>() else {
            continue;
        };
        let Some((userinfo, _)) = uri.authority().and_then(|a| a.as_str().split_once('@')) else {
            continue;
        };
        let (user, pass) = match userinfo.split_once(':') {
            Some((user, pass)) => (percent_decoded(user), Some(percent_decoded(pass))),
            None => (percent_decoded(userinfo), None),
        };
        match pass {
            Some(pass) if !pass.is_empty() => {
                found.push(format!("{user}:{pass}"));
                found.push(pass);
            }
            _ => found.push(user),
        }
        // The `Basic` value exactly as it is sent.
        let basic = Matcher::builder()
            .all(url.trim())
            .build()
            .intercept(&probe)
            .and_then(|i| i.basic_auth().cloned());
        if let Some(basic) = basic
            && let Ok(value) = basic.to_str()
        {
            found.push(value.trim_start_matches("Basic ").to_owned());
        }
    }
    // Known to the process's redaction step before any request goes through the proxy.
    for credential in &found {
        brain_mcp_proto::text::learn(credential);
    }
    Secrets::new(found)
}

/// `text` with `%XX` escapes decoded (invalid UTF-8 replaced).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|h| std::str::from_utf8(h).ok())
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests;
