//! The terminal while a network runs: the live view's session (one per network,
//! from setup to the end of teardown) and what it shows (`TuiInfo`), and the lines
//! that wait for the terminal while the view owns it.

use super::Signals;
use super::bring_up::RunFacts;
use super::model::role;
use crate::metrics;
use crate::scenario::Scenario;
use crate::setup::StepLog;
use crate::tui;
use tokio_util::sync::CancellationToken;

/// The terminal of one network: its live view, if it has one, and the lines kept
/// for the terminal until the view ends.
pub(super) struct View {
    pub session: Option<tui::session::Session>,
    pub out: Output,
}

impl View {
    /// The live view when `tui` (and the terminal can show it), else progress lines.
    pub fn start(tui: bool, scenario: &Scenario, runtime: &str, signals: &Signals) -> View {
        let session = tui
            .then(|| start_session(scenario, runtime, &signals.cancel))
            .flatten();
        // With the view on the terminal, a signal is shown by the view, not a line.
        signals.set_live_view(session.is_some());
        let out = Output::new(session.is_some());
        View { session, out }
    }

    /// A step log shown in the view as the task `title`, or printed as lines.
    pub fn step_log(&self, title: &str) -> StepLog {
        match &self.session {
            Some(s) => StepLog::for_view(s.progress(), title),
            None => StepLog::default(),
        }
    }

    /// True once the operator quit the view's load.
    pub fn quit(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.quit())
    }

    /// Ends the view (the terminal is back), then prints the lines kept for it.
    pub async fn finish(mut self, signals: &Signals) {
        if let Some(session) = self.session.take() {
            match session.finish().await {
                Ok(Some(tui::TuiExit::Quit)) => crate::lines::errln!("stopped from the live view"),
                Ok(_) => {}
                Err(e) => crate::lines::errln!("live view failed: {e:#}"),
            }
            signals.set_live_view(false);
        }
        self.out.flush();
    }
}

/// Starts the live view before setup; `None` (with the reason printed) if the
/// terminal cannot show it, and the run goes on with progress lines.
fn start_session(
    scenario: &Scenario,
    runtime: &str,
    cancel: &CancellationToken,
) -> Option<tui::session::Session> {
    let info = tui::TuiInfo {
        scenario: scenario.name.clone(),
        runtime: runtime.to_string(),
        nodes: Vec::new(),
        resources: None,
        machine: None,
        report_snapshots: None,
        point: None,
    };
    match tui::session::Session::start(info, cancel.clone()) {
        Ok(s) => Some(s),
        Err(e) => {
            crate::lines::errln!("live view failed ({e:#}); progress lines follow");
            None
        }
    }
}

/// Lines for the terminal: printed at once, or kept while the live view owns it.
pub(super) struct Output {
    hold: bool,
    kept: Vec<(bool, String)>,
}

impl Output {
    pub(super) fn new(hold: bool) -> Self {
        Output {
            hold,
            kept: Vec::new(),
        }
    }

    pub(super) fn stdout(&mut self, line: String) {
        if self.hold {
            self.kept.push((true, line));
        } else {
            crate::lines::outln!("{line}");
        }
    }

    pub(super) fn stderr(&mut self, line: String) {
        if self.hold {
            self.kept.push((false, line));
        } else {
            crate::lines::errln!("{line}");
        }
    }

    /// Prints what was kept, in order, and prints at once from now on.
    pub(super) fn flush(&mut self) {
        self.hold = false;
        for (to_stdout, line) in self.kept.drain(..) {
            if to_stdout {
                crate::lines::outln!("{line}");
            } else {
                crate::lines::errln!("{line}");
            }
        }
    }
}

/// What the live view shows about the network, besides snapshots.
pub(super) fn tui_info(
    scenario: &Scenario,
    facts: &RunFacts,
    readings: tokio::sync::watch::Receiver<Vec<metrics::ResourceReading>>,
) -> tui::TuiInfo {
    let channels = |name: &str| {
        let of_node = scenario
            .channels
            .iter()
            .filter(|c| c.from == name || c.to == name);
        Some(of_node.map(|c| c.count).sum())
    };
    let mut nodes: Vec<tui::NodeInfo> = facts
        .nodes
        .iter()
        .map(|(spec, ready, _)| tui::NodeInfo {
            name: spec.name.clone(),
            implementation: spec.implementation.to_string(),
            version: ready.info.version.clone(),
            role: role(scenario, &spec.name).into(),
            channels: channels(&spec.name),
        })
        .collect();
    nodes.push(tui::NodeInfo {
        name: crate::chain::CHAIN_NAME.into(),
        implementation: scenario.chain.kind.to_string(),
        // "btcd version 0.24.2-beta", "Bitcoin Core daemon version v31.99.0 (...)".
        version: (facts.chain_version.split_once("version ").map(|(_, v)| v))
            .unwrap_or(&facts.chain_version)
            .to_string(),
        role: "chain".into(),
        channels: None,
    });
    tui::TuiInfo {
        scenario: scenario.name.clone(),
        runtime: facts.runtime.clone(),
        nodes,
        resources: Some(readings),
        // Set by the point, which samples the host beside the load.
        machine: None,
        report_snapshots: None,
        point: None,
    }
}
