//! Command line (clap derive). Doc comments are the help text.

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;

/// Benchmark Lightning Network nodes from a YAML scenario.
///
/// `lnbench-tui SCENARIO` brings up a regtest chain and the scenario's nodes, funds
/// them, opens channels, drives payments and reports throughput, latency
/// percentiles and failures. `--report DIR` writes DIR/report.json (and the HTML
/// report); a terminal still shows the live view, and without one (scripts, CI) or
/// with `--no-tui` the run prints progress lines instead.
#[derive(Debug, Parser)]
#[command(name = "lnbench-tui", version = crate::build_info::version())]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub run: RunArgs,

    /// No colour in the live view or in log lines (as the NO_COLOR environment
    /// variable asks, see no-color.org).
    #[arg(long, global = true, help_heading = "Output")]
    pub no_color: bool,

    /// More detail: `-v` adds p90, max, the last second's p50 / p99 and failures by
    /// reason to each progress line and info log lines; `-vv` debug log lines too.
    /// Log lines go to stderr (held while the live view draws); RUST_LOG, when set,
    /// decides which instead.
    #[arg(short, long, action = clap::ArgAction::Count, global = true, help_heading = "Output")]
    pub verbose: u8,
}

impl Cli {
    /// The command line, checked as [`Cli::try_parse_checked`] does; on an error clap's
    /// message and exit code (2).
    pub fn parse_checked() -> Cli {
        Cli::try_parse_checked(std::env::args_os()).unwrap_or_else(|e| e.exit())
    }

    /// Parses `args` (the program's name first). Global options (`-v`, `--no-color`)
    /// go before or after a subcommand; a scenario run's arguments (the scenario,
    /// `--report`, `--payments`...) go only without one. clap's own
    /// `args_conflicts_with_subcommands` counted a global option as a run's argument
    /// and took the subcommand's name for the scenario (`-v validate x.yaml`).
    pub fn try_parse_checked<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let mut command = Cli::command();
        let matches = command.try_get_matches_from_mut(args)?;
        let cli = Cli::from_arg_matches(&matches)?;
        let Some((name, _)) = matches.subcommand() else {
            return Ok(cli);
        };
        // An argument of the subcommand's own with a run's name (history's global
        // `--store`) is the subcommand's: clap hands a global's value up to here too.
        let own = |id: &clap::Id| {
            (command.find_subcommand(name))
                .is_some_and(|sub| sub.get_arguments().any(|arg| arg.get_id() == id))
        };
        let run = RunArgs::augment_args(clap::Command::new("run"));
        let given = (run.get_arguments()).find(|arg| {
            matches.value_source(arg.get_id().as_str()) == Some(ValueSource::CommandLine)
                && !own(arg.get_id())
        });
        match given {
            None => Ok(cli),
            Some(arg) => {
                let what = match arg.get_long() {
                    Some(long) => format!("--{long}"),
                    None => format!(
                        "the scenario ({})",
                        cli.run.scenario.unwrap_or_default().display()
                    ),
                };
                Err(command.error(
                    ErrorKind::ArgumentConflict,
                    format!(
                        "{what} goes with a scenario run, not with `{name}`; \
                         `lnbench-tui {name} --help` lists what `{name}` takes"
                    ),
                ))
            }
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse and check scenario files; errors give file:line:column.
    Validate {
        /// Scenario files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Compare two or more runs side by side: prints the markdown table, and with
    /// --out DIR writes DIR/compare.html and DIR/compare.md (sweeps: one folder per
    /// point, with an index of each). The first run is the baseline.
    Compare {
        /// Report directories or report.json files; the first is the baseline. Sweep
        /// directories are compared point by point (matched by label, DIR/<label>/).
        #[arg(required = true, value_name = "REPORT")]
        inputs: Vec<PathBuf>,
        /// Write compare.html and compare.md into this directory (without it, the
        /// table is printed and nothing is written).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Flag changes larger than this many percent of the baseline.
        #[arg(long, value_name = "PCT", default_value = "5")]
        noise_pct: f64,
    },
    /// Remove every container, network and volume a run of the docker runtime left
    /// behind, and every namespace a kubernetes run left on the cluster of the current
    /// kubeconfig (anything labelled `lnbench.run`, e.g. after the tool was killed), and
    /// list what was removed. A run whose lnbench-tui still runs on this host is left
    /// alone (and listed), as is one started from another host or by another user,
    /// unless --all.
    Down {
        /// Remove every run's things, also those of runs still going and other users'
        /// (listed with whose they were).
        #[arg(long)]
        all: bool,
        /// Only this run's things (its id, as in the `lnbench.run` label or the run
        /// directory's name after `lnbench-`).
        #[arg(long, value_name = "ID")]
        run: Option<String>,
        /// Where the runs' directories are (as given to a run's --run-dir; default:
        /// the system's temp dir).
        #[arg(long, value_name = "DIR")]
        run_dir: Option<PathBuf>,
    },
    /// Print a shell completion script, e.g. `source <(lnbench-tui completions bash)`
    /// in ~/.bashrc, or the output saved where the shell looks for completions.
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), e.g. `lnbench-tui man > lnbench-tui.1; man -l lnbench-tui.1`.
    Man,
    /// The results history: every run that writes a report is recorded (unless
    /// --no-store); list, show, trend and check the runs recorded, or import earlier
    /// report directories.
    History(HistoryArgs),
    /// Network snapshots (local and docker runtimes): the chain's and nodes' data after setup,
    /// kept so later runs start from them (`lnbench-tui SCENARIO --snapshot DIR`).
    Snapshot(SnapshotArgs),
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    #[command(subcommand)]
    pub command: SnapshotCommand,
}

#[derive(Debug, Subcommand)]
pub enum SnapshotCommand {
    /// Set up the scenario's network as a run does (chain, nodes, funds, channels),
    /// stop it cleanly and keep its data dirs, credentials, the scenario and the
    /// binaries' versions, with a sha256 of every file. A history ladder
    /// (`sweep: { history: [...] }` alone) saves each step in DIR/payments-<N>, each
    /// restored from the step before it.
    Save {
        /// The scenario (YAML); no sweep but a history ladder, nodes on their default
        /// database.
        scenario: PathBuf,
        /// Where to keep it (a new or empty directory). Default: snapshots/<scenario
        /// name> in the cache directory, which `--snapshot <scenario name>` finds.
        #[arg(long, value_name = "DIR")]
        to: Option<PathBuf>,
        /// Start from this snapshot (a directory, or a name in the cache) instead of
        /// setting the network up: its payments count toward `history:`, which pays
        /// only the rest before the save.
        #[arg(long, value_name = "DIR|NAME")]
        from: Option<PathBuf>,
        /// With --from: nodes saved with other versions are restored and migrate, as
        /// a run's --upgrade.
        #[arg(long, requires = "from")]
        upgrade: bool,
        /// Where the run directory is created while it sets up (default: the system
        /// temp dir).
        #[arg(long, value_name = "DIR")]
        run_dir: Option<PathBuf>,
        /// Keep the run directory after saving.
        #[arg(long)]
        keep: bool,
    },
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The results store: an SQLite file, or a PostgreSQL server
    /// (postgres://USER@HOST:PORT/DATABASE, the password in $PGPASSWORD). Default:
    /// $LNBENCH_HISTORY, else history.sqlite in the cache directory ($LNBENCH_CACHE,
    /// $XDG_CACHE_HOME/lnbench-tui or ~/.cache/lnbench-tui).
    #[arg(long, value_name = "PATH|URL", global = true)]
    pub store: Option<PathBuf>,
    #[command(subcommand)]
    pub command: HistoryCommand,
}

#[derive(Debug, Subcommand)]
pub enum HistoryCommand {
    /// Record existing report directories (a run's, or a sweep's with its points and
    /// repeats). Nothing is recorded when any of them cannot be read.
    Import {
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
    },
    /// The runs recorded, oldest first.
    List {
        /// Only runs of this scenario (its name).
        #[arg(long, value_name = "NAME")]
        scenario: Option<String>,
        /// Only runs with a node of this implementation (lnd, cln, eclair, ldk).
        #[arg(long, value_name = "NAME")]
        implementation: Option<String>,
        /// Only runs with a node whose version contains this text.
        #[arg(long, value_name = "TEXT")]
        version: Option<String>,
        /// Only runs started on or after this date (2026-11-20, or RFC 3339).
        #[arg(long, value_name = "DATE")]
        since: Option<String>,
    },
    /// One run: its host, envelope, and each point's nodes and figures.
    Show {
        /// The run's id (as `list` shows it).
        id: i64,
    },
    /// A metric over the runs, per scenario point, by node version or commit.
    Trend {
        /// The metric: TPS, p50 / p90 / p99 latency, the nodes' CPU, or their data-dir
        /// growth per payment.
        #[arg(value_parser = ["tps", "p50", "p90", "p99", "cpu", "bytes-per-payment"])]
        metric: String,
        /// Only this scenario (its name).
        #[arg(long, value_name = "NAME")]
        scenario: Option<String>,
        /// Group the runs by the nodes' versions or their source commits.
        #[arg(long, value_parser = ["version", "commit"], default_value = "version")]
        by: String,
    },
    /// The latest run against the previous comparable ones (same scenario text, point,
    /// load, envelope and host class), by the significance test of `compare`. Exit 1 on
    /// a significant regression, 0 otherwise.
    Check {
        /// The latest run of this scenario (default: the latest run).
        #[arg(long, value_name = "NAME")]
        scenario: Option<String>,
        /// Compare with up to N earlier comparable runs.
        #[arg(long, value_name = "N", default_value = "10")]
        last: usize,
        /// The metrics tested (repeat the flag for several).
        #[arg(long, value_parser = ["tps", "p50", "p90", "p99", "cpu", "bytes-per-payment"], default_values = ["tps", "p50", "p99"])]
        metric: Vec<String>,
        /// A significant change for the worse is a regression only when it is larger
        /// than PCT percent and than the widest swing of an earlier run's median.
        #[arg(long, value_name = "PCT", default_value = "5")]
        min_change: f64,
    },
    /// Write a static site of the runs (no script): DIR/index.html lists the
    /// scenarios, each scenario's page has SVG trend charts of TPS, p50, p99, CPU and
    /// bytes per payment per point, each dot linked to its report.
    Site {
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The scenario to run (YAML).
    pub scenario: Option<PathBuf>,

    /// Write the report into this directory (report.json, report.html, charts,
    /// summary.md). Without a terminal (scripts, CI) the run is headless.
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub report: Option<PathBuf>,

    /// Write the threshold verdicts as JUnit XML to FILE, for CI systems: one test
    /// suite per point, one test case per threshold.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub junit: Option<PathBuf>,

    /// Print progress lines instead of the live view, even in a terminal.
    #[arg(long, help_heading = "Output")]
    pub no_tui: bool,

    /// Keep the run directory (node data dirs, logs, credentials) after the run.
    #[arg(long, help_heading = "Output")]
    pub keep: bool,

    /// Where run directories are created (default: the system temp dir).
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub run_dir: Option<PathBuf>,

    /// Serve the run's metrics for Prometheus (OpenMetrics text at /metrics) on
    /// HOST:PORT while it runs, e.g. 127.0.0.1:9464; a port alone listens on loopback.
    #[arg(long, value_name = "HOST:PORT", value_parser = crate::metrics::export::parse_listen, help_heading = "Output")]
    pub metrics_listen: Option<std::net::SocketAddr>,

    /// Take CPU profiles of the nodes during the load (flame graphs in the report):
    /// the scenario's `profile:` settings, or every node 5 s into the load for 10 s.
    #[arg(long, help_heading = "Output")]
    pub profile: bool,

    /// Start from this snapshot (`lnbench-tui snapshot save`) instead of setting the
    /// network up: a directory, or a name saved in the cache. Its scenario's network
    /// and binaries' versions must be this run's; funding and channel opening are
    /// skipped.
    #[arg(long, value_name = "DIR|NAME", help_heading = "Setup")]
    pub snapshot: Option<PathBuf>,

    /// With --snapshot (or the scenario's `snapshot:`): restore it though its nodes
    /// were saved with other versions. Each such node starts this run's binary (image)
    /// on the saved data and migrates it as it starts; the report times it
    /// (`snapshot.migrations`). The chain's version must still be the snapshot's.
    #[arg(long, help_heading = "Setup")]
    pub upgrade: bool,

    /// Stop after this many payments (overrides the scenario's `stop.payments`).
    #[arg(long, value_name = "N", value_parser = crate::scenario::payments_flag, help_heading = "Load")]
    pub payments: Option<u64>,

    /// Run the load (each sweep point) N times and report the spread (overrides the
    /// scenario's `repeat:` count; 1 to 20).
    #[arg(long, value_name = "N", help_heading = "Load")]
    pub repeat: Option<u32>,

    /// Stop after this long, e.g. `30s` or `5m` (overrides `stop.duration`).
    #[arg(long, value_name = "DURATION", value_parser = crate::scenario::duration_flag, help_heading = "Load")]
    pub duration: Option<std::time::Duration>,

    /// Record the run in this results store, a file or a postgres:// URL (default:
    /// $LNBENCH_HISTORY, else, for a release build, history.sqlite in the cache
    /// directory); see `lnbench-tui history`.
    #[arg(long, value_name = "PATH|URL", help_heading = "History")]
    pub store: Option<PathBuf>,

    /// Do not record the run in the results history.
    #[arg(long, conflicts_with = "store", help_heading = "History")]
    pub no_store: bool,
}
