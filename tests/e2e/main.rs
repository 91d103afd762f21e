//! The end-to-end tests that may share a process: one test binary, one module per
//! former `tests/e2e_*.rs` file, so libtest runs their tests two at a time across
//! modules (its default thread count on two cores) and the build links one binary.
//! Each test starts and checks only its own run: its own directories, processes,
//! containers and scenario names. One check looks at the whole machine on purpose: no
//! process of it may have a password on its command line while a run goes on (the
//! tool never puts one there, so another module's run may be looked at too).
//!
//! These stay test binaries of their own (`tests/e2e_*.rs`), which cargo runs one
//! after another:
//!
//! - `e2e_disturbed`, `e2e_etcd`, `e2e_history`, `e2e_jamming`, `e2e_mpp`,
//!   `e2e_soak`, `e2e_sweeps`, `e2e_tui`: timing-sensitive, they take a
//!   `ONE_AT_A_TIME` lock and must not share the machine with other tests' nodes.
//! - `e2e_docker`, `e2e_interrupt`, `e2e_kube`, `e2e_signals`: they call the global
//!   `lnbench-tui down`, which removes every killed run's leftovers, another test's
//!   too while it checks its own.
//! - `e2e_docker_postgres`: it finds its containers by their scenario's name
//!   (`cln-pays-cln`), which `cln::` runs in Docker too.
//! - `e2e_kube_faults`: its tests take the process-wide `common::kube::CLUSTER` lock
//!   (one run on the cluster at a time); here the lock would not keep other modules'
//!   nodes off the machine beside a cluster run. It also needs the `kubernetes`
//!   feature (`required-features` in Cargo.toml).
//!
//! One module: `cargo test --test e2e cln::` (a filter is a substring: `faults::`
//! runs `docker_faults::` too); one test: `cargo test --test e2e faults::NAME -- --exact`.

#[path = "../common/mod.rs"]
mod common;

mod alice_pays_bob;
mod bitcoind;
mod cln;
mod docker_faults;
mod docker_matrix;
mod drain;
mod eclair;
mod external;
mod faults;
mod faults_chain;
mod faults_impls;
mod faults_kinds;
mod history_phase;
mod ldk;
mod matrix;
mod metrics;
mod network;
mod profile;
mod rebalance;
mod repeats;
mod resources;
mod snapshot;
mod stream;
mod thresholds;
