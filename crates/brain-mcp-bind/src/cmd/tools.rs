//! `mcp-tools`: discover a server's tools and print Brain bindings for the named ones.

use std::io::Write;
use std::time::Duration;

use super::logging::Logging;
use super::process::Signals;
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use brain_mcp_proto::mcp::Tool;
use brain_mcp_proto::text::{FRAGMENT_LIMIT, cut, json_safe, terminal_safe};
use brain_mcp_transport::Secrets;
use brain_tools_core::{EndpointUrl, SecretVar};

use super::flags::{self, FlagSpec, Parsed};
use crate::discover::{self, DEFAULT_DEADLINE, Request};
use crate::{ClientProof, McpClient, OAuthClient};

const SPECS: &[FlagSpec] = &[
    FlagSpec {
        name: "url",
        value: "URL",
        help: "the server's Streamable HTTP endpoint",
    },
    FlagSpec {
        name: "token-env",
        value: "NAME",
        help: "environment variable holding the server's API key; used to connect and written into the bindings",
    },
    FlagSpec {
        name: "oauth-client-id",
        value: "ID",
        help: "OAuth client credentials instead of -token-env: the client id (with -oauth-secret-env, -oauth-key-env or a workload token, and -oauth-issuer); the bindings carry them as an oauth block",
    },
    FlagSpec {
        name: "oauth-secret-env",
        value: "NAME",
        help: "environment variable holding the OAuth client secret",
    },
    FlagSpec {
        name: "oauth-key-env",
        value: "NAME",
        help: "environment variable holding the OAuth client's PEM private key (private_key_jwt)",
    },
    FlagSpec {
        name: "oauth-workload-token-file",
        value: "PATH",
        help: "file holding a JWT the platform issues to this workload (and rotates), read afresh for each token and presented as a JWT bearer grant (workload identity federation) instead of a client secret",
    },
    FlagSpec {
        name: "oauth-workload-token-env",
        value: "NAME",
        help: "environment variable holding a JWT the platform issued to this workload, presented as a JWT bearer grant instead of a client secret",
    },
    FlagSpec {
        name: "oauth-scopes",
        value: "a,b",
        help: "comma-separated scopes to ask for (default: what the server says it needs)",
    },
    FlagSpec {
        name: "oauth-issuer",
        value: "URL",
        help: "the authorization server the OAuth credentials may go to, and the only one; without it, nothing secret is sent: the server's authorization server is found and named, to review and pin",
    },
    FlagSpec {
        name: "allow-private-auth-destinations",
        value: "",
        help: "let URLs the server names for authorization reach private, link-local and unique-local addresses even when the server is not on that network (the host config's allow_private_auth_destinations); loopback stays reachable only for a server on loopback",
    },
    FlagSpec {
        name: "tenant",
        value: "TENANT",
        help: "the tenant allowed to use the tools",
    },
    FlagSpec {
        name: "tools",
        value: "a,b,c",
        help: "comma-separated remote tool names to include (1 to 128)",
    },
    FlagSpec {
        name: "timeout",
        value: "SECONDS",
        help: "bound on the whole discovery (default 30)",
    },
    FlagSpec {
        name: "list",
        value: "URL",
        help: "instead of binding, list every tool the server at URL offers: name, tab, description",
    },
    FlagSpec {
        name: "v",
        value: "",
        help: "print one line per exchange to stderr (method, status, bytes, time, session, connection) and the era decision",
    },
];

const USAGE: &str = "mcp-tools -url URL [-token-env NAME | OAUTH] -tenant TENANT -tools a,b,c [-timeout SECONDS]
       mcp-tools -list URL [-token-env NAME | OAUTH] [-timeout SECONDS]
       OAUTH: -oauth-client-id ID (-oauth-secret-env NAME | -oauth-key-env NAME | -oauth-workload-token-file PATH | -oauth-workload-token-env NAME) [-oauth-scopes a,b] [-oauth-issuer URL] [-allow-private-auth-destinations]";
const ABOUT: &str = "Connects to an MCP server (either protocol era), reads its whole tool list and prints \
a JSON array with one Brain tool binding per named tool, in the order named. Review the output, then \
copy it into the tools array of the host config. With -list, prints one line per tool the server \
offers instead, to choose from. Ctrl-C, SIGTERM and SIGHUP stop it and close its session. Exit status: \
0 on success, 1 when discovery fails or is interrupted, 2 when the command line is invalid. \
RUST_LOG (for example RUST_LOG=debug) writes the library's full trace to stderr.";

/// The `mcp-tools` program: its process arguments (each must be UTF-8, else exit 2), then
/// [`main`], then exit with its code.
pub fn program() -> ! {
    super::process::run("mcp-tools", |args| {
        main(args, &mut std::io::stdout(), &mut std::io::stderr())
    })
}

/// What the command line asks for.
enum Job {
    /// Bindings for the named tools.
    Bind(Request),
    /// Every tool the server offers.
    List {
        url: String,
        token_env: Option<String>,
        oauth: Option<OAuthClient>,
        deadline: Duration,
    },
}

/// Runs `mcp-tools` with `args` (without the program name).
pub fn main(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let (job, verbose, oauth_vars, allow_private) = match prepare(args) {
        Ok(Some(r)) => r,
        Ok(None) => {
            let _ = write!(out, "{}", flags::help(USAGE, ABOUT, SPECS));
            return EXIT_OK;
        }
        Err(message) => {
            let _ = writeln!(err, "mcp-tools: {}", super::stderr_line(&message));
            return EXIT_USAGE;
        }
    };
    if let Job::Bind(request) = &job
        && let Err(e) = discover::check(request)
    {
        let _ = writeln!(err, "mcp-tools: {}", super::stderr_line(&e.to_string()));
        return EXIT_FAILED;
    }
    let runtime = match super::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            let _ = writeln!(err, "mcp-tools: could not start the runtime: {e}");
            return EXIT_FAILED;
        }
    };
    let client = match McpClient::new() {
        Ok(client) => client,
        Err(e) => {
            let _ = writeln!(err, "mcp-tools: could not set up HTTP: {e}");
            return EXIT_FAILED;
        }
    };
    client.set_allow_private_auth_destinations(allow_private);
    let logging = Logging::new("mcp-tools", verbose, secrets_of(&job, &oauth_vars, &client));
    let code = runtime.block_on(logging.run(async {
        // A stop signal drops the discovery, whose session then closes itself; the flush
        // below sends that DELETE.
        let mut signals = Signals::new();
        let code = tokio::select! {
            code = perform(&client, &job, out, err) => code,
            name = signals.next() => {
                let _ = writeln!(err, "mcp-tools: stopped by {name}; nothing printed");
                EXIT_FAILED
            }
        };
        let watch = (code == EXIT_FAILED).then(|| signals.exit_on_second("mcp-tools"));
        client.flush(Duration::from_secs(5)).await;
        if let Some(watch) = watch {
            watch.abort();
        }
        code
    }));
    logging.finish(err);
    super::leave(runtime);
    code
}

/// What the program keeps out of its logs: the token or client secret the job reads,
/// the proxies' credentials. (OAuth tokens got later are removed where they are used.)
fn secrets_of(job: &Job, flags_vars: &[String], client: &McpClient) -> Secrets {
    let var = match job {
        Job::Bind(request) => request.token_env.as_deref(),
        Job::List { token_env, .. } => token_env.as_deref(),
    };
    let values = var
        .into_iter()
        .chain(flags_vars.iter().map(String::as_str))
        .filter_map(|v| std::env::var(v).ok());
    client.proxy_secrets().with(values)
}

/// Runs the job, printing what it found; the exit code.
async fn perform(client: &McpClient, job: &Job, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let outcome = match job {
        Job::Bind(request) => discover::discover(client, request)
            .await
            .map(|found| (found.warnings, json_safe(&found.json).into_owned())),
        Job::List {
            url,
            token_env,
            oauth,
            deadline,
        } => match oauth {
            Some(oauth) => discover::list_oauth(client, url, oauth, *deadline).await,
            None => discover::list(client, url, token_env.as_deref(), *deadline).await,
        }
        .map(|mut listed| {
            if listed.tools.is_empty() {
                listed.warnings.push("the server offers no tools".into());
            }
            (listed.warnings, listing(&listed.tools))
        }),
    };
    match outcome {
        Ok((warnings, printed)) => {
            for warning in &warnings {
                let _ = writeln!(err, "mcp-tools: {}", super::stderr_line(warning));
            }
            if !printed.is_empty() {
                let _ = writeln!(out, "{printed}");
            }
            EXIT_OK
        }
        Err(e) => {
            let _ = writeln!(err, "mcp-tools: {}", super::stderr_line(&e.to_string()));
            EXIT_FAILED
        }
    }
}

/// The most characters of a description shown by `-list`.
const LISTED_DESCRIPTION: usize = 200;

/// One line per tool: its name, a tab, the first line of its description (cut). Both
/// are escaped for the terminal, so a server cannot forge lines.
fn listing(tools: &[Tool]) -> String {
    let lines: Vec<String> = tools
        .iter()
        .map(|tool| {
            let first = tool
                .description
                .as_deref()
                .and_then(|d| d.lines().find(|l| !l.trim().is_empty()))
                .unwrap_or("")
                .trim();
            let short: String = first.chars().take(LISTED_DESCRIPTION).collect();
            let more = if short.len() < first.len() { "…" } else { "" };
            let name = terminal_safe(&tool.name);
            let name = cut(&name, FRAGMENT_LIMIT);
            format!("{name}\t{}{more}", terminal_safe(&short))
        })
        .collect();
    lines.join("\n")
}

/// A job and how to run it: `-v`, the variables holding OAuth secrets, and
/// `-allow-private-auth-destinations`.
type Prepared = (Job, bool, Vec<String>, bool);

fn prepare(args: &[String]) -> Result<Option<Prepared>, String> {
    let flags = match flags::parse(SPECS, args).map_err(|e| e.to_string())? {
        Parsed::Help => return Ok(None),
        Parsed::Run(flags) => flags,
    };
    let verbose = flags.is_set("v");
    let vars = [
        "oauth-secret-env",
        "oauth-key-env",
        "oauth-workload-token-env",
    ]
    .iter()
    .filter_map(|f| flags.get(f).map(str::to_owned))
    .collect();
    let allow_private = flags.is_set("allow-private-auth-destinations");
    prepare_job(&flags).map(|job| Some((job, verbose, vars, allow_private)))
}

/// The OAuth client the `-oauth-*` flags describe, if any.
fn oauth_of(flags: &flags::Flags) -> Result<Option<OAuthClient>, String> {
    let Some(client_id) = flags.get("oauth-client-id") else {
        for flag in [
            "oauth-secret-env",
            "oauth-key-env",
            "oauth-workload-token-file",
            "oauth-workload-token-env",
            "oauth-scopes",
            "oauth-issuer",
        ] {
            if flags.get(flag).is_some() {
                return Err(format!("-{flag} needs -oauth-client-id"));
            }
        }
        return Ok(None);
    };
    if flags.get("token-env").is_some() {
        return Err("-token-env and -oauth-client-id exclude each other: give one".into());
    }
    let given: Vec<SecretVar> = [
        flags
            .get("oauth-secret-env")
            .map(|v| SecretVar::Secret(v.to_owned())),
        flags
            .get("oauth-key-env")
            .map(|v| SecretVar::Key(v.to_owned())),
        flags
            .get("oauth-workload-token-file")
            .map(|v| SecretVar::WorkloadFile(v.to_owned())),
        flags
            .get("oauth-workload-token-env")
            .map(|v| SecretVar::WorkloadEnv(v.to_owned())),
    ]
    .into_iter()
    .flatten()
    .collect();
    let [secret] = <[SecretVar; 1]>::try_from(given).map_err(|_| {
        "-oauth-client-id needs one of -oauth-secret-env, -oauth-key-env, \
         -oauth-workload-token-file or -oauth-workload-token-env"
            .to_owned()
    })?;
    if let Some(var) = secret.env_var()
        && std::env::var(var).map_or(true, |v| v.is_empty())
    {
        return Err(format!("environment variable {var} is not set or empty"));
    }
    if let Some(path) = secret.file()
        && !std::path::Path::new(path).is_absolute()
    {
        return Err(format!(
            "-oauth-workload-token-file: {path} is not an absolute path"
        ));
    }
    let proof = ClientProof::Env(secret);
    let mut client = match flags.get("oauth-issuer") {
        Some(issuer) => {
            EndpointUrl::parse(issuer).map_err(|r| format!("-oauth-issuer: the URL {r}"))?;
            OAuthClient::pinned(issuer, client_id, proof)
        }
        None => OAuthClient::unpinned(client_id, proof),
    };
    if let Some(scopes) = flags.get("oauth-scopes") {
        client = client.with_scopes(
            scopes
                .split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
        );
    }
    Ok(Some(client))
}

fn prepare_job(flags: &flags::Flags) -> Result<Job, String> {
    let deadline = deadline(flags.get("timeout"))?;
    if let Some(url) = flags.get("list") {
        for bind_only in ["url", "tenant", "tools"] {
            if flags.get(bind_only).is_some() {
                return Err(format!(
                    "-{bind_only} binds tools; -list only lists them (give one or the other)"
                ));
            }
        }
        EndpointUrl::parse(url).map_err(|reason| format!("-list: the URL {reason}"))?;
        return Ok(Job::List {
            url: url.to_owned(),
            token_env: flags.get("token-env").map(str::to_owned),
            oauth: oauth_of(flags)?,
            deadline,
        });
    }
    let url = flags.require("url").map_err(|e| e.to_string())?.to_owned();
    // The rule the host config applies, checked before anything is sent.
    EndpointUrl::parse(&url).map_err(|reason| format!("-url: the URL {reason}"))?;
    let tenant = flags
        .require("tenant")
        .map_err(|e| e.to_string())?
        .to_owned();
    let list = flags.require("tools").map_err(|e| e.to_string())?;
    // `-tools ""` names no tool (not one empty name); `a,,b` still names an empty one.
    let tools = if list.trim().is_empty() {
        Vec::new()
    } else {
        list.split(',').map(|s| s.trim().to_owned()).collect()
    };
    Ok(Job::Bind(Request {
        url,
        token_env: flags.get("token-env").map(str::to_owned),
        oauth: oauth_of(flags)?,
        tenant,
        tools,
        deadline,
    }))
}

/// `-timeout`, or the default.
fn deadline(flag: Option<&str>) -> Result<Duration, String> {
    match flag {
        None => Ok(DEFAULT_DEADLINE),
        Some(s) => match s.parse::<f64>() {
            Ok(secs) if secs > 0.0 && secs <= 3600.0 => Ok(Duration::from_secs_f64(secs)),
            _ => Err(format!(
                "-timeout {s:?} is not a number of seconds between 0 and 3600"
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn private_auth_destinations_are_allowed_only_when_asked() {
        let base = ["-list", "https://mcp.example.com/mcp"];
        let (_, _, _, allow) = prepare(&args(&base)).unwrap().unwrap();
        assert!(!allow);
        let with = [&base[..], &["-allow-private-auth-destinations"]].concat();
        let (_, _, _, allow) = prepare(&args(&with)).unwrap().unwrap();
        assert!(allow);
    }
}
