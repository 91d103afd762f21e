//! The ruler's own cost: payments through the real client stacks the tool uses for real
//! nodes, against fakes on loopback that answer at once, so what is measured is the
//! tool. Run with `cargo bench --bench ruler`; docs/benchmarks.md says what it covers.
//!
//! - LND: the LND driver's `LndNode` (gRPC over TLS with the pinned certificate, the
//!   macaroon header, HTTP/2, keysend through `SendPaymentV2`'s stream) against
//!   `node::lnd::fake_grpc`.
//! - Eclair: the Eclair driver's `EclairNode` (HTTP with basic auth, the payment's end
//!   read from the websocket's `payment-sent`) against `node::eclair::fake_api`.
//!
//! Payments go through the engine (closed loop, 64 workers, keysend) on a tokio runtime
//! with one worker thread. Each fake runs in a child process (this binary again, with
//! `LNBENCH_RULER_SERVE` set), so the CPU of this process, which the engine's summary
//! reads from `/proc/self/stat`, is the tool's alone.
//!
//! It exits non-zero when a stack makes fewer than 1,000 payments per second per core of
//! the tool's CPU (payments divided by the tool's CPU seconds), or when a payment fails.
//! On a slow machine set another floor with `LNBENCH_RULER_MIN_PER_CORE=<payments/s>`;
//! `LNBENCH_RULER_PAYMENTS` sets the payments of each measured round (default 100,000).
//! Without `--bench` (as `cargo test --benches` runs it, a debug build) it makes a few
//! hundred payments per stack and holds them to no floor.

mod common;

use lnbench_tui::metrics::process::ProcessStats;
use lnbench_tui::node::eclair::fake_api::{self, FakeEclair};
use lnbench_tui::node::lnd::fake_grpc::{self, FakeLnd};
use lnbench_tui::node::{Implementation, LightningNode, driver};
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Set in a child: serve this stack's fake (`lnd` or `eclair`) in the directory given as
/// the first argument, print its address, serve until stdin closes.
const SERVE: &str = "LNBENCH_RULER_SERVE";
const MIN_PER_CORE: &str = "LNBENCH_RULER_MIN_PER_CORE";
const PAYMENTS: &str = "LNBENCH_RULER_PAYMENTS";
const DEFAULT_MIN_PER_CORE: f64 = 1_000.0;
const DEFAULT_PAYMENTS: u64 = 100_000;
const ROUNDS: usize = 3;
const SMOKE_PAYMENTS: u64 = 300;
const WORKERS: u32 = 64;

#[derive(Clone, Copy)]
enum Stack {
    Lnd,
    Eclair,
}

impl Stack {
    const ALL: [Stack; 2] = [Stack::Lnd, Stack::Eclair];

    fn name(self) -> &'static str {
        match self {
            Stack::Lnd => "lnd",
            Stack::Eclair => "eclair",
        }
    }

    fn path(self) -> &'static str {
        match self {
            Stack::Lnd => "gRPC, TLS, macaroon, HTTP/2, SendPaymentV2 stream",
            Stack::Eclair => "HTTP/1.1 with basic auth, websocket payment-sent",
        }
    }

    fn implementation(self) -> Implementation {
        match self {
            Stack::Lnd => Implementation::Lnd,
            Stack::Eclair => Implementation::Eclair,
        }
    }
}

fn main() -> ExitCode {
    if let Ok(stack) = std::env::var(SERVE) {
        return serve(&stack);
    }
    let full = std::env::args().any(|a| a == "--bench");
    let floor = match env_number(MIN_PER_CORE, DEFAULT_MIN_PER_CORE) {
        Ok(floor) => floor,
        Err(message) => return fail(&message),
    };
    let payments = match env_number(PAYMENTS, DEFAULT_PAYMENTS as f64) {
        Ok(n) if full => n as u64,
        Ok(_) => SMOKE_PAYMENTS,
        Err(message) => return fail(&message),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime");
    println!(
        "ruler: keysend through the real client stacks, closed loop, {WORKERS} workers, \
         one tokio worker thread; fakes answer at once in child processes"
    );
    if !full {
        println!("smoke run ({payments} payments, no floor): `cargo bench --bench ruler` measures");
    }
    let mut verdicts = Vec::new();
    for stack in Stack::ALL {
        match bench_stack(&runtime, stack, payments, full) {
            Ok(per_core) => verdicts.push((stack, per_core)),
            Err(message) => return fail(&message),
        }
    }
    let below: Vec<String> = verdicts
        .iter()
        .filter(|(_, per_core)| full && *per_core < floor)
        .map(|(stack, per_core)| format!("{} {per_core:.0}", stack.name()))
        .collect();
    if below.is_empty() {
        return ExitCode::SUCCESS;
    }
    fail(&format!(
        "below the floor of {floor:.0} payments/s per core of tool CPU: {} (median round); \
         on a slow machine set {MIN_PER_CORE}",
        below.join(", ")
    ))
}

fn fail(message: &str) -> ExitCode {
    eprintln!("ruler: FAILED: {message}");
    ExitCode::FAILURE
}

fn env_number(name: &str, default: f64) -> Result<f64, String> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(text) => text
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|n| *n > 0.0)
            .ok_or_else(|| format!("{name}={text:?} is not a positive number")),
    }
}

/// Warms the stack up, measures `ROUNDS` rounds (one when not `full`), prints them and
/// returns the median round's payments per second per core of tool CPU.
fn bench_stack(
    runtime: &tokio::runtime::Runtime,
    stack: Stack,
    payments: u64,
    full: bool,
) -> Result<f64, String> {
    let server = Server::start(stack)?;
    let sender = runtime.block_on(connect(stack, &server))?;
    println!("{} ({}):", stack.name(), stack.path());
    runtime.block_on(measure(&sender, payments.min(2_000)))?;
    let mut per_core = Vec::new();
    for round in 1..=if full { ROUNDS } else { 1 } {
        let fake_cpu = ProcessStats::of(server.child.id()).cpu_s;
        let m = runtime.block_on(measure(&sender, payments))?;
        let fake_cpu = ProcessStats::of(server.child.id())
            .cpu_s
            .zip(fake_cpu)
            .map(|(end, start)| end - start);
        let per_payment = |cpu: f64| cpu * 1e6 / payments as f64;
        let fake = fake_cpu.map_or("?".into(), |c| format!("{:.1}", per_payment(c)));
        println!(
            "  round {round}: {payments} payments in {:.2} s: {:>8.0} payments/s  \
             tool CPU {:.1} µs/payment = {:.0} payments/s per core  (fake: {fake} µs/payment)",
            m.wall_s,
            payments as f64 / m.wall_s,
            per_payment(m.tool_cpu_s),
            payments as f64 / m.tool_cpu_s,
        );
        per_core.push(payments as f64 / m.tool_cpu_s);
    }
    per_core.sort_by(f64::total_cmp);
    Ok(per_core[per_core.len() / 2])
}

/// The fake of one stack in a child process, and the directory holding its credentials.
struct Server {
    child: Child,
    addr: SocketAddr,
    dir: tempfile::TempDir,
}

impl Server {
    fn start(stack: Stack) -> Result<Server, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
        let exe = std::env::current_exe().map_err(|e| format!("this binary's path: {e}"))?;
        let mut child = Command::new(exe)
            .env(SERVE, stack.name())
            .arg(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting the fake {}: {e}", stack.name()))?;
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        let _ = BufReader::new(stdout).read_line(&mut line);
        let addr = line.trim().parse().map_err(|_| {
            let _ = child.kill();
            format!("the fake {} gave no address: {line:?}", stack.name())
        })?;
        Ok(Server { child, addr, dir })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Closing its stdin ends the child; the kill covers a child that hangs.
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The child: serves one fake until its stdin closes.
fn serve(stack: &str) -> ExitCode {
    let Some(dir) = std::env::args().nth(1).map(PathBuf::from) else {
        return fail("the fake's directory is the first argument");
    };
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    let started: Result<(), String> = runtime.block_on(async {
        let addr = match stack {
            "lnd" => FakeLnd::start(&dir).await.map(|fake| fake.addr),
            "eclair" => start_eclair(&dir).await,
            other => return Err(format!("{SERVE}={other:?}: not lnd or eclair")),
        }
        .map_err(|e| format!("starting the fake {stack}: {e}"))?;
        println!("{addr}");
        let _ = tokio::task::spawn_blocking(|| std::io::stdin().read_to_end(&mut Vec::new())).await;
        Ok(())
    });
    match started {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => fail(&message),
    }
}

/// The Eclair fake pushing every payment's event right after answering it.
async fn start_eclair(dir: &Path) -> std::io::Result<SocketAddr> {
    let fake = FakeEclair::start().await;
    fake.script.then_at_once.store(true, Ordering::Relaxed);
    fake.endpoint("alice", dir)?;
    let addr = fake.addr;
    // The fake serves from tasks of its own; it is kept until the process ends.
    std::mem::forget(fake);
    Ok(addr)
}

/// The stack's real client, made the way a run makes it: the driver's `connect`.
async fn connect(stack: Stack, server: &Server) -> Result<Arc<dyn LightningNode>, String> {
    let dir = server.dir.path();
    let endpoint = match stack {
        Stack::Lnd => fake_grpc::endpoint("alice", server.addr, dir),
        Stack::Eclair => fake_api::endpoint("alice", server.addr, dir),
    };
    driver(stack.implementation())
        .connect(&endpoint)
        .await
        .map_err(|e| format!("connecting to the fake {}: {e}", stack.name()))
}

struct Measured {
    wall_s: f64,
    tool_cpu_s: f64,
}

/// `payments` keysends from `sender` through the engine; every one must succeed.
async fn measure(sender: &Arc<dyn LightningNode>, payments: u64) -> Result<Measured, String> {
    let plan = common::closed_keysend(Arc::clone(sender), WORKERS, payments);
    let (s, wall_s) = common::run(plan)
        .await
        .map_err(|e| format!("the engine: {e}"))?;
    if s.ok != payments {
        return Err(format!(
            "{} of {payments} payments succeeded ({} failed, {} indeterminate, failures: {:?})",
            s.ok, s.failed, s.indeterminate, s.failures_by_reason
        ));
    }
    // The tool's CPU comes in 10 ms ticks: at least one tick, so a rate stays finite.
    let tool_cpu_s = s
        .tool_cpu_s
        .ok_or("no CPU reading of this process")?
        .max(0.01);
    Ok(Measured { wall_s, tool_cpu_s })
}
