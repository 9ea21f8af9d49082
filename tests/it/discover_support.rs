//! Shared helpers for the discovery tests: running `mcp-tools`, reading printed bindings
//! with their key order and raw bytes, the peers' tool lists from the captured fixtures,
//! and a tiny 2026-era server with behaviours the test server does not have.

use std::collections::HashMap;
use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// The tenant the discovery tests bind.
pub(crate) const TENANT: &str = "tenant-d";

/// What one run of `mcp-tools` produced.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl fmt::Debug for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Runs `mcp-tools` with `args` in this process (it builds its own runtime, so call it
/// from a plain `#[test]`, not from inside a Tokio runtime).
pub(crate) fn mcp_tools(args: &[&str]) -> Run {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = brain_mcp_bind::cmd::tools::main(&args, &mut out, &mut err);
    Run {
        code,
        stdout: String::from_utf8(out).expect("UTF-8 stdout"),
        stderr: String::from_utf8(err).expect("UTF-8 stderr"),
    }
}

/// One printed binding: its top-level members in printed order, values as printed bytes.
pub(crate) struct Printed(pub(crate) Vec<(String, Box<RawValue>)>);

impl Printed {
    pub(crate) fn keys(&self) -> Vec<&str> {
        self.0.iter().map(|(k, _)| k.as_str()).collect()
    }

    /// The raw printed text of member `key`.
    pub(crate) fn raw(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.get())
    }

    /// Member `key` parsed.
    pub(crate) fn value(&self, key: &str) -> Option<Value> {
        self.raw(key)
            .map(|raw| serde_json::from_str(raw).expect("printed JSON"))
    }
}

impl<'de> serde::Deserialize<'de> for Printed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = Printed;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a binding object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Printed, A::Error> {
                let mut members = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Box<RawValue>>()? {
                    members.push((k, v));
                }
                Ok(Printed(members))
            }
        }
        d.deserialize_map(Members)
    }
}

/// Parses `mcp-tools` output: a pretty-printed JSON array of bindings.
pub(crate) fn printed(stdout: &str) -> Vec<Printed> {
    assert!(
        stdout.starts_with("[\n  {\n    \"name\": "),
        "not pretty-printed as expected:\n{stdout}"
    );
    serde_json::from_str(stdout).expect("mcp-tools prints a JSON array of objects")
}

/// The key order of the product description's example, with `output_schema` last.
pub(crate) fn expected_keys(token_env: bool, output_schema: bool) -> Vec<&'static str> {
    let mut keys = vec!["name", "description", "input_schema", "url", "mcp_tool"];
    if token_env {
        keys.push("token_env");
    }
    keys.extend(["tenants", "timeout_seconds", "max_output_bytes"]);
    if output_schema {
        keys.push("output_schema");
    }
    keys
}

/// A tool as the server listed it, with its schemas as the exact bytes it sent.
pub(crate) struct ListedTool {
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    pub(crate) input_schema: String,
    pub(crate) output_schema: Option<String>,
    /// `execution.taskSupport` when it lets the tool run as a task.
    pub(crate) task_support: Option<String>,
}

#[derive(serde::Deserialize)]
struct FixtureLine<'a> {
    dir: String,
    #[serde(borrow)]
    message: &'a RawValue,
}

#[derive(serde::Deserialize)]
struct RawResponse<'a> {
    #[serde(borrow)]
    result: Option<&'a RawValue>,
}

#[derive(serde::Deserialize)]
struct RawPage<'a> {
    #[serde(borrow, default)]
    tools: Vec<RawTool<'a>>,
}

#[derive(serde::Deserialize)]
struct RawTool<'a> {
    name: String,
    description: Option<String>,
    #[serde(borrow, rename = "inputSchema")]
    input_schema: &'a RawValue,
    #[serde(borrow, rename = "outputSchema")]
    output_schema: Option<&'a RawValue>,
    #[serde(default)]
    execution: Option<Value>,
}

/// The tool list captured from a peer (`crates/brain-mcp-proto/tests/fixtures/<peer>/<file>`),
/// every page in order: what the pinned server sends a client without capabilities.
pub(crate) fn fixture_tools(peer: &str, file: &str) -> Vec<ListedTool> {
    let path: PathBuf = brain_tests::peers::project_root()
        .join("crates/brain-mcp-proto/tests/fixtures")
        .join(peer)
        .join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut tools = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let line: FixtureLine<'_> = serde_json::from_str(line).expect("a fixture line");
        if line.dir != "recv" {
            continue;
        }
        let response: RawResponse<'_> =
            serde_json::from_str(line.message.get()).expect("a JSON-RPC response");
        let Some(result) = response.result else {
            continue;
        };
        let page: RawPage<'_> = serde_json::from_str(result.get()).expect("a tools/list result");
        tools.extend(page.tools.into_iter().map(|t| {
            ListedTool {
                name: t.name,
                description: t.description,
                input_schema: t.input_schema.get().to_owned(),
                output_schema: t.output_schema.map(|s| s.get().to_owned()),
                task_support: t
                    .execution
                    .as_ref()
                    .and_then(|e| e["taskSupport"].as_str())
                    .filter(|s| matches!(*s, "optional" | "required"))
                    .map(str::to_owned),
            }
        }));
    }
    assert!(!tools.is_empty(), "{} lists no tools", path.display());
    tools
}

/// Asserts that `stdout` holds one binding per tool of `listed`, in that order, matching
/// the server's list field by field (schemas byte for byte) with the documented defaults.
pub(crate) fn assert_bindings(stdout: &str, listed: &[ListedTool], url: &str) {
    let bindings = printed(stdout);
    assert_eq!(bindings.len(), listed.len(), "one binding per named tool");
    for (b, tool) in bindings.iter().zip(listed) {
        let name = &tool.name;
        let mut keys = expected_keys(false, tool.output_schema.is_some());
        if tool.task_support.is_some() {
            keys.push("task_support");
        }
        assert_eq!(b.keys(), keys, "key order of {name}");
        assert_eq!(
            b.value("task_support"),
            tool.task_support.as_ref().map(|s| json!(s)),
            "task_support of {name}"
        );
        assert_eq!(b.value("name"), Some(json!(name)));
        assert_eq!(b.value("mcp_tool"), Some(json!(name)));
        assert_eq!(
            b.value("description"),
            Some(json!(tool.description.clone().unwrap_or_default())),
            "description of {name}"
        );
        assert_eq!(
            b.raw("input_schema"),
            Some(tool.input_schema.as_str()),
            "input_schema of {name}, byte for byte"
        );
        assert_eq!(
            b.raw("output_schema"),
            tool.output_schema.as_deref(),
            "output_schema of {name}, byte for byte"
        );
        assert_eq!(b.value("url"), Some(json!(url)));
        assert_eq!(b.value("tenants"), Some(json!([TENANT])));
        assert_eq!(b.value("timeout_seconds"), Some(json!(300)));
        assert_eq!(b.value("max_output_bytes"), Some(json!(1_048_576)));
    }
}

/// The names of `listed`, comma-joined for `-tools`.
pub(crate) fn names(listed: &[ListedTool]) -> String {
    listed
        .iter()
        .map(|t| t.name.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// A URL where nothing listens (a port that was just free).
pub(crate) fn dead_url() -> String {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("a free port");
    let addr = listener.local_addr().expect("its address");
    drop(listener);
    format!("http://{addr}/mcp")
}

/// How a [`TinyServer`] behaves.
#[derive(Clone, Debug)]
pub(crate) enum Behaviour {
    /// Accepts connections and reads requests, but never answers.
    Silent,
    /// 2026-07-28 era; `tools/list` pages carry one tool each and a `nextCursor`, for ever.
    EndlessPages,
    /// 2026-07-28 era; `tools/list` lists these tools on one page.
    Tools(Vec<Value>),
    /// 2026-07-28 era; `tools/list` is answered with this JSON-RPC error code and message.
    ListFails(i64, &'static str),
}

/// A minimal HTTP/1.1 MCP server on 127.0.0.1, on its own threads, for behaviours the
/// shared test server does not offer. Counts connections and JSON-RPC methods.
pub(crate) struct TinyServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    connections: Arc<AtomicUsize>,
    methods: Arc<Mutex<HashMap<String, usize>>>,
    thread: Option<JoinHandle<()>>,
}

impl TinyServer {
    pub(crate) fn start(behaviour: Behaviour) -> Self {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("address");
        let stop = Arc::new(AtomicBool::new(false));
        let connections = Arc::new(AtomicUsize::new(0));
        let methods = Arc::new(Mutex::new(HashMap::new()));
        let (s, c, m) = (stop.clone(), connections.clone(), methods.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        c.fetch_add(1, Ordering::Relaxed);
                        let (b, m, s) = (behaviour.clone(), m.clone(), s.clone());
                        std::thread::spawn(move || serve(stream, &b, &m, &s));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Self {
            addr,
            stop,
            connections,
            methods,
            thread: Some(thread),
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// How many TCP connections were accepted.
    pub(crate) fn connections(&self) -> usize {
        self.connections.load(Ordering::Relaxed)
    }

    /// How many requests with JSON-RPC `method` arrived.
    pub(crate) fn count(&self, method: &str) -> usize {
        let methods = self
            .methods
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        methods.get(method).copied().unwrap_or(0)
    }
}

impl Drop for TinyServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Serves one connection: reads requests one after another and answers each.
fn serve(
    stream: TcpStream,
    behaviour: &Behaviour,
    methods: &Mutex<HashMap<String, usize>>,
    stop: &AtomicBool,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    while let Some(body) = read_request(&mut reader, stop) {
        let msg: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let method = msg["method"].as_str().unwrap_or("").to_owned();
        *methods
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(method.clone())
            .or_default() += 1;
        let Some(answer) = answer(behaviour, &method, &msg) else {
            // Silent: keep the connection open until the test ends.
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(20));
            }
            break;
        };
        let text = answer.to_string();
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            text.len()
        );
        if writer.write_all(head.as_bytes()).is_err() || writer.write_all(text.as_bytes()).is_err()
        {
            break;
        }
    }
    let _ = writer.shutdown(Shutdown::Both);
}

/// Reads one request's body (`None` at the end of the connection or when stopped).
fn read_request(reader: &mut BufReader<TcpStream>, stop: &AtomicBool) -> Option<Vec<u8>> {
    let mut length = 0usize;
    let mut started = false;
    let mut line = String::new();
    loop {
        match reader.read_line(&mut line) {
            Ok(0) => return None,
            Ok(_) => {}
            // A timeout keeps what was read of the line; the next read appends to it.
            Err(e) if is_timeout(&e) && !stop.load(Ordering::Relaxed) => continue,
            Err(_) => return None,
        }
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            if started {
                break;
            }
        } else {
            started = true;
            if let Some((name, value)) = trimmed.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().ok()?;
            }
        }
        line.clear();
    }
    let mut body = vec![0; length.min(1 << 20)];
    let mut filled = 0;
    while filled < body.len() {
        match reader.read(&mut body[filled..]) {
            Ok(0) => return None,
            Ok(n) => filled += n,
            Err(e) if is_timeout(&e) && !stop.load(Ordering::Relaxed) => {}
            Err(_) => return None,
        }
    }
    Some(body)
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// The answer to one message, or `None` to never answer.
fn answer(behaviour: &Behaviour, method: &str, msg: &Value) -> Option<Value> {
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    let complete = |mut result: Value| {
        result["resultType"] = json!("complete");
        result["ttlMs"] = json!(0);
        result["cacheScope"] = json!("public");
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    };
    match (behaviour, method) {
        (Behaviour::Silent, _) => None,
        (_, "server/discover") => Some(complete(json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
        }))),
        (Behaviour::EndlessPages, "tools/list") => {
            let n: u64 = msg
                .pointer("/params/cursor")
                .and_then(Value::as_str)
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            Some(complete(json!({
                "tools": [{"name": format!("t{n}"), "inputSchema": {"type": "object"}}],
                "nextCursor": (n + 1).to_string(),
            })))
        }
        (Behaviour::Tools(tools), "tools/list") => Some(complete(json!({ "tools": tools }))),
        (Behaviour::ListFails(code, message), "tools/list") => Some(json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": code, "message": message},
        })),
        _ => Some(json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32601, "message": "Method not found"},
        })),
    }
}
