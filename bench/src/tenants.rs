//! `brain-bench tenants [--count N] [--access-bytes B] [--refresh-bytes B]`: the memory
//! one tenant's OAuth authorizer costs when N tenants are kept (default 100,000).
//!
//! Each tenant is a principal of its own with client credentials for one server; its
//! authorizer is made as a call makes it (`benching::hold_token`: the target, the
//! client's pool) and left as a first call leaves it: the server's authority learned
//! from its metadata documents (the search run on them), and a token response of its
//! own kept: an access token of B bytes (default 1 KiB), a refresh token (default
//! 1 KiB), a scope and a lifetime. The memory
//! is the process's allocated memory (`RssAnon`) after the first 1% of tenants (at most
//! 1,000, which fill what is made once: the process's secret registry, the first table
//! sizes) and after the rest, divided by the rest; against it, in the same run, the raw
//! text a tenant needs (its tokens, principal, server URL, issuer and client id) and the
//! pool's own estimate (`ClientStats::authorizer_bytes`). Then every tenant's authorizer
//! is looked up again in a scattered order, as calls do (the least-recently-used order
//! is updated on each).
//!
//! The last line printed is the JSON report; `measure` runs this in a process of its own.

use std::time::{Duration, Instant};

use brain_mcp_bind::{ClientConfig, ClientProof, McpClient, OAuthClient, Secret, benching};
use serde_json::{Value, json};

use crate::measure::memory_kib;
use crate::spawn;

const SERVER: &str = "https://mcp.example.com/mcp";
const ISSUER: &str = "https://auth.example.com";
const CLIENT_ID: &str = "brain-host";

/// The server's protected resource metadata, as a search fetches it first.
const RESOURCE_METADATA: &str = r#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"],"scopes_supported":["tools.read","tools.write"],"bearer_methods_supported":["header"]}"#;

/// Its authorization server's metadata, of a common shape.
const SERVER_METADATA: &str = r#"{"issuer":"https://auth.example.com","authorization_endpoint":"https://auth.example.com/oauth2/authorize","token_endpoint":"https://auth.example.com/oauth2/token","registration_endpoint":"https://auth.example.com/oauth2/register","jwks_uri":"https://auth.example.com/oauth2/jwks","response_types_supported":["code"],"grant_types_supported":["authorization_code","client_credentials","refresh_token"],"token_endpoint_auth_methods_supported":["client_secret_basic","client_secret_post","private_key_jwt"],"code_challenge_methods_supported":["S256"],"scopes_supported":["openid","offline_access","tools.read","tools.write"]}"#;

/// What one run measures.
struct Plan {
    count: usize,
    access: usize,
    refresh: usize,
}

fn plan(args: &[String]) -> Result<Plan, String> {
    let mut plan = Plan {
        count: 100_000,
        access: 1024,
        refresh: 1024,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let n = value
            .parse::<usize>()
            .map_err(|e| format!("{flag} {value:?}: {e}"))?;
        match flag.as_str() {
            "--count" => plan.count = n.max(2),
            "--access-bytes" => plan.access = n.max(1),
            "--refresh-bytes" => plan.refresh = n,
            other => return Err(format!("unknown flag {other:?}")),
        }
    }
    Ok(plan)
}

/// `len` characters of base64url text, different for every `seed` (tokens are opaque
/// and random to whoever keeps them; a JWT's text is base64url too).
fn token_text(seed: u64, len: usize) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let text: Vec<u8> = (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ALPHABET[(state >> 58) as usize]
        })
        .collect();
    String::from_utf8(text).unwrap_or_default()
}

fn principal(i: usize) -> String {
    format!("tenant-{i:06}@example.com")
}

/// Tenant `i`'s credentials: the host's client, for its principal.
fn oauth(proof: &ClientProof, i: usize) -> OAuthClient {
    OAuthClient::pinned(ISSUER, CLIENT_ID, proof.clone()).for_principal(principal(i))
}

/// The token response tenant `i` got.
fn response(plan: &Plan, i: usize) -> String {
    let refresh = if plan.refresh > 0 {
        format!(
            r#","refresh_token":"{}""#,
            token_text(2 * i as u64 + 1, plan.refresh)
        )
    } else {
        String::new()
    };
    format!(
        r#"{{"access_token":"{}","token_type":"Bearer","expires_in":3600,"scope":"tools.read"{refresh}}}"#,
        token_text(2 * i as u64, plan.access)
    )
}

fn make(
    client: &McpClient,
    proof: &ClientProof,
    plan: &Plan,
    tenants: std::ops::Range<usize>,
) -> Result<(), String> {
    for i in tenants {
        let body = response(plan, i);
        let documents = [RESOURCE_METADATA.as_bytes(), SERVER_METADATA.as_bytes()];
        benching::hold_token(client, SERVER, &oauth(proof, i), documents, body.as_bytes())?;
    }
    Ok(())
}

/// Makes the tenants and prints the report.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let plan = plan(args)?;
    let mut config = ClientConfig::default();
    config.native_roots = false;
    let client = McpClient::with_config(config).map_err(|e| e.to_string())?;
    client.set_authorizer_limits(usize::MAX, usize::MAX);
    let proof = ClientProof::Secret(Secret::new("bench-client-secret-7f3a9c2e1d"));
    let warm = (plan.count / 100).clamp(1, 1000);
    make(&client, &proof, &plan, 0..warm)?;
    let (_, _, before, _) = memory_kib();
    let started = Instant::now();
    make(&client, &proof, &plan, warm..plan.count)?;
    let made = started.elapsed();
    let (_, _, after, _) = memory_kib();
    let stats = client.stats();
    let rest = (plan.count - warm) as f64;
    let measured = (after.saturating_sub(before) * 1024) as f64 / rest;
    let raw = (plan.access
        + plan.refresh
        + principal(plan.count / 2).len()
        + SERVER.len()
        + ISSUER.len()
        + CLIENT_ID.len()) as f64;
    let estimate = stats.authorizer_bytes as f64 / stats.authorizers.max(1) as f64;
    // Every tenant again, in a scattered order (a stride prime to the count).
    let stride = (1..plan.count)
        .map(|s| plan.count / 3 + s)
        .find(|s| gcd(*s, plan.count) == 1)
        .unwrap_or(1);
    let started = Instant::now();
    for k in 0..plan.count {
        benching::touch(&client, SERVER, &oauth(&proof, k * stride % plan.count))?;
    }
    let found = started.elapsed();
    let kept = client.stats().authorizers;
    let report = json!({
        "tenants": plan.count, "kept": kept, "access_bytes": plan.access,
        "refresh_bytes": plan.refresh, "measured_bytes": measured, "raw_bytes": raw,
        "estimate_bytes": estimate, "make_us": per_us(made, rest),
        "find_us": per_us(found, plan.count as f64),
        "default_max_bytes": brain_mcp_bind::DEFAULT_MAX_AUTHORIZER_BYTES,
    });
    println!("{}", summary(&report));
    println!("{report}");
    Ok(())
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn per_us(d: Duration, n: f64) -> f64 {
    d.as_secs_f64() * 1e6 / n
}

/// One line for people, from the report.
fn summary(r: &Value) -> String {
    let f = |k: &str| r.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    format!(
        "TENANTS {:.0} ({:.0} kept; tokens {:.0} + {:.0} B): {:.2} KiB per tenant measured, \
         raw text {:.2} KiB, ratio {:.2}; the pool's estimate {:.2} KiB ({:.2} of measured), \
         so the default {:.0} MiB bound keeps about {:.0}k such tenants; made in {:.1} us each, \
         found again in {:.2} us",
        f("tenants"),
        f("kept"),
        f("access_bytes"),
        f("refresh_bytes"),
        f("measured_bytes") / 1024.0,
        f("raw_bytes") / 1024.0,
        f("measured_bytes") / f("raw_bytes"),
        f("estimate_bytes") / 1024.0,
        f("estimate_bytes") / f("measured_bytes"),
        f("default_max_bytes") / 1048576.0,
        f("default_max_bytes") / f("estimate_bytes") / 1000.0,
        f("make_us"),
        f("find_us"),
    )
}

/// Runs `tenants --count count` in a process of its own and prints its summary.
pub(crate) fn measure(exe: &str, count: usize) -> Result<(), String> {
    println!("\ntenants (a fresh process; allocated memory per tenant's OAuth authorizer):");
    let args = [
        "tenants".to_owned(),
        "--count".to_owned(),
        count.to_string(),
    ];
    match spawn::side(exe, &args, Duration::from_secs(120)) {
        Ok(report) => println!("{}", summary(&report)),
        Err(e) => println!("TENANTS {count}: FAILED {e}"),
    }
    Ok(())
}
