//! The end-to-end tests that may share a process: one test binary, one module per
//! former `tests/e2e_*.rs` file, so libtest runs their tests two at a time across
//! modules (its default thread count on two cores) and the build links one binary.
//! Each test starts and checks only its own run: its own directories, processes,
//! containers and scenario names. One check looks at the whole machine on purpose: no
//! process of it may have a password on its command line while a run goes on (the
//! tool never puts one there, so another module's run may be looked at too).
//!
//! Tests that must not run beside some others take a turn (a lock) in the process, and
//! are in the matching test group of `.config/nextest.toml`, which keeps them apart when
//! `cargo nextest run` (CI's and the README's test command) runs each test in its own
//! process (tests/test_groups.rs holds the two lists equal):
//! `common::killed_runs_turn()` for those that leave a killed run behind and call
//! `lnbench-tui down` (it removes every killed run's containers it finds);
//! `common::kube::CLUSTER` for runs on the local cluster; a module's own lock where
//! its networks are too large for two at once (`etcd::`, `docker::`,
//! `sweeps::`), or one live view at a time (`tui::`), or one multi-part network at a
//! time (`mpp::`).
//! `kube::` and `kube_faults::` need the `kubernetes` feature (a default one).
//!
//! These stay test binaries of their own (`tests/e2e_*.rs`), which `cargo test` runs
//! one after another and nextest runs with the machine to themselves: `e2e_disturbed`,
//! `e2e_history`, `e2e_jamming`. They are timing-sensitive (a verdict on the machine's
//! quiet, TPS compared between runs, a race for HTLC slots), take a `ONE_AT_A_TIME`
//! lock, and must not share the machine with other tests' nodes.
//!
//! One module: `cargo test --test e2e cln::` (a filter is a substring: `faults::`
//! runs `docker_faults::` too); one test: `cargo test --test e2e faults::NAME -- --exact`.

#[path = "../common/mod.rs"]
mod common;

mod alice_pays_bob;
mod basic_run;
mod bitcoind;
mod cln;
mod docker;
mod docker_faults;
mod docker_matrix;
mod docker_postgres;
mod drain;
mod eclair;
mod etcd;
mod external;
mod faults;
mod faults_chain;
mod faults_impls;
mod faults_kinds;
mod history_phase;
mod interrupt;
#[cfg(feature = "kubernetes")]
mod kube;
#[cfg(feature = "kubernetes")]
mod kube_faults;
mod ldk;
mod matrix;
mod metrics;
mod mpp;
mod network;
mod profile;
mod rebalance;
mod repeats;
mod resources;
mod restarts;
mod signals;
mod snapshot;
mod stream;
mod sweeps;
mod thresholds;
mod tui;
