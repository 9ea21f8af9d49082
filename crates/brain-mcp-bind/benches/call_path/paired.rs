//! The paired comparison: our path and the raw floor in alternating blocks on one server,
//! so background load on the machine hits both sides alike. Its ratios are the headline.

use std::time::{Duration, Instant};

use brain_tests::server::TestServer;
use tokio::runtime::Runtime;

use crate::cpu::Cpu;
use crate::ours::OurClient;
use crate::raw::RawClient;

/// Wall time a block of calls should take (the call count is calibrated to it).
const BLOCK_TARGET: Duration = Duration::from_millis(150);

/// What one side did over all its blocks.
#[derive(Clone, Copy, Debug, Default)]
pub struct Side {
    /// Calls made in measured blocks.
    pub calls: u64,
    /// Their total wall time.
    pub wall: Duration,
    /// CPU spent during them, client and server.
    pub cpu: Cpu,
    /// Connections the server accepted during them.
    pub connections: usize,
    /// HTTP requests the server received during them.
    pub requests: usize,
    /// Connections the server accepted during the first `cold_calls` calls of a new client.
    pub cold_connections: usize,
}

impl Side {
    fn add(&mut self, calls: u64, wall: Duration, cpu: Cpu, connections: usize, requests: usize) {
        self.calls += calls;
        self.wall += wall;
        self.cpu.client_ns += cpu.client_ns;
        self.cpu.server_ns += cpu.server_ns;
        self.connections += connections;
        self.requests += requests;
    }

    /// Mean wall time per call, microseconds.
    pub fn wall_us(&self) -> f64 {
        self.wall.as_secs_f64() * 1e6 / self.calls.max(1) as f64
    }

    /// Client CPU per call, microseconds.
    pub fn client_cpu_us(&self) -> f64 {
        self.cpu.client_ns as f64 / 1e3 / self.calls.max(1) as f64
    }

    /// Server CPU per call, microseconds.
    pub fn server_cpu_us(&self) -> f64 {
        self.cpu.server_ns as f64 / 1e3 / self.calls.max(1) as f64
    }

    /// HTTP requests per call, as the server counted them.
    pub fn requests_per_call(&self) -> f64 {
        self.requests as f64 / self.calls.max(1) as f64
    }

    /// New connections per 1000 calls, once warm.
    pub fn connections_per_1000(&self) -> f64 {
        self.connections as f64 * 1000.0 / self.calls.max(1) as f64
    }
}

/// The outcome of one case.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The case's name.
    pub name: &'static str,
    /// Our path.
    pub ours: Side,
    /// The raw floor.
    pub raw: Side,
    /// Per-round wall-time ratios ours/raw.
    pub round_ratios: Vec<f64>,
    /// Calls per block.
    pub block: u64,
    /// Calls of each new client counted for its cold connections.
    pub cold_calls: u64,
}

impl Outcome {
    /// The median per-round wall-time ratio.
    pub fn wall_ratio(&self) -> f64 {
        let mut r = self.round_ratios.clone();
        r.sort_by(f64::total_cmp);
        r.get(r.len() / 2).copied().unwrap_or(f64::NAN)
    }

    /// Client CPU ratio over all blocks.
    pub fn cpu_ratio(&self) -> f64 {
        self.ours.cpu.client_ns as f64 / self.raw.cpu.client_ns.max(1) as f64
    }
}

/// Either side of the comparison.
pub enum Caller<'a> {
    /// Our path.
    Ours(&'a OurClient),
    /// The raw floor.
    Raw(&'a RawClient),
}

impl Caller<'_> {
    async fn call(&self) {
        match self {
            Self::Ours(c) => c.call().await,
            Self::Raw(c) => {
                c.call().await;
            }
        }
    }
}

/// `n` calls in a row: wall time, CPU, and the server's connection and request counts.
fn block(
    rt: &Runtime,
    server: &TestServer,
    caller: &Caller<'_>,
    n: u64,
) -> (Duration, Cpu, usize, usize) {
    let before = server.stats();
    let cpu = Cpu::now();
    let started = Instant::now();
    rt.block_on(async {
        for _ in 0..n {
            caller.call().await;
        }
    });
    let wall = started.elapsed();
    let cpu = Cpu::now().since(cpu);
    let after = server.stats();
    (
        wall,
        cpu,
        after.connections - before.connections,
        after.received.len() - before.received.len(),
    )
}

/// Runs `rounds` rounds of alternating blocks (both sides already built, never called).
pub fn compare(
    name: &'static str,
    rt: &Runtime,
    server: &TestServer,
    ours: &OurClient,
    raw: &RawClient,
    rounds: usize,
) -> Outcome {
    let ours = Caller::Ours(ours);
    let raw = Caller::Raw(raw);
    let cold_calls = 20;
    let mut out = Outcome {
        name,
        ours: Side::default(),
        raw: Side::default(),
        round_ratios: Vec::new(),
        block: 0,
        cold_calls,
    };
    // Cold start (also the warm-up): how many connections a new client opens.
    out.ours.cold_connections = block(rt, server, &ours, cold_calls).2;
    out.raw.cold_connections = block(rt, server, &raw, cold_calls).2;
    let (probe, ..) = block(rt, server, &raw, cold_calls);
    let per_call = probe.as_secs_f64() / cold_calls as f64;
    out.block = ((BLOCK_TARGET.as_secs_f64() / per_call.max(1e-6)) as u64).clamp(20, 2000);
    for round in 0..rounds {
        let order = if round % 2 == 0 {
            [&ours, &raw]
        } else {
            [&raw, &ours]
        };
        let mut walls = [Duration::ZERO; 2];
        for caller in order {
            let (wall, cpu, conns, reqs) = block(rt, server, caller, out.block);
            let (side, slot) = match caller {
                Caller::Ours(_) => (&mut out.ours, 0),
                Caller::Raw(_) => (&mut out.raw, 1),
            };
            side.add(out.block, wall, cpu, conns, reqs);
            walls[slot] = wall;
        }
        out.round_ratios
            .push(walls[0].as_secs_f64() / walls[1].as_secs_f64().max(1e-9));
    }
    out
}

/// Prints the summary table of every case.
pub fn print(outcomes: &[Outcome], rounds: usize) {
    if outcomes.is_empty() {
        return;
    }
    println!();
    println!(
        "call_path paired summary: {rounds} rounds of alternating blocks per case; \
         wall ratio = median of per-round ours/raw, CPU = this process's client threads"
    );
    println!(
        "{:<16} {:>8} {:>8} {:>10} {:>8} {:>8} {:>9} {:>13} {:>11} {:>13} {:>10}",
        "case",
        "ours us",
        "raw us",
        "wall ratio",
        "ours cpu",
        "raw cpu",
        "cpu ratio",
        "srv cpu o/r",
        "req/call",
        "conn/1k o/r",
        "cold o/r"
    );
    for o in outcomes {
        println!(
            "{:<16} {:>8.1} {:>8.1} {:>10.2} {:>8.1} {:>8.1} {:>9.2} {:>6.1}/{:<6.1} {:>5.2}/{:<5.2} {:>6.1}/{:<6.1} {:>4}/{:<4}",
            o.name,
            o.ours.wall_us(),
            o.raw.wall_us(),
            o.wall_ratio(),
            o.ours.client_cpu_us(),
            o.raw.client_cpu_us(),
            o.cpu_ratio(),
            o.ours.server_cpu_us(),
            o.raw.server_cpu_us(),
            o.ours.requests_per_call(),
            o.raw.requests_per_call(),
            o.ours.connections_per_1000(),
            o.raw.connections_per_1000(),
            o.ours.cold_connections,
            o.raw.cold_connections,
        );
    }
    for o in outcomes {
        println!(
            "RATIO {} wall={:.2} cpu={:.2} (block {} calls; cold = connections over the first {} calls)",
            o.name,
            o.wall_ratio(),
            o.cpu_ratio(),
            o.block,
            o.cold_calls
        );
    }
}
