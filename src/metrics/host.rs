//! The machine under the run: how busy the whole host was (`/proc/stat`: busy,
//! iowait, steal) against what the run itself used (every node, the chain, the
//! database servers and proxies it started, the tool, and on the Docker runtime the
//! engine's work: dockerd, containerd, the run's shims and docker-proxy processes),
//! sampled once a second.
//! The difference is load from outside the run: a build, another test, a neighbour
//! on the hypervisor (steal). A run that had much of it says its figures were
//! disturbed, and by how much, instead of passing them off as the nodes' own.

use serde::Serialize;

/// Outside load above this (percent of one core, averaged over the load) disturbs.
pub const OUTSIDE_LOAD_LIMIT_PCT: f64 = 10.0;
/// Steal time above this (percent of all CPU time) disturbs.
pub const STEAL_LIMIT_PCT: f64 = 2.0;

/// Jiffies of the host's CPUs (the `cpu` line of `/proc/stat`), summed over cores.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct CpuTimes {
    /// user + nice + system + irq + softirq: time the host's CPUs did work.
    busy: u64,
    iowait: u64,
    steal: u64,
    /// Every field but guest time (already counted in user).
    total: u64,
}

impl CpuTimes {
    /// The `cpu` line of `/proc/stat`'s text.
    fn parse(stat: &str) -> Option<CpuTimes> {
        let line = stat.lines().find(|l| l.starts_with("cpu "))?;
        let f: Vec<u64> = (line.split_whitespace().skip(1))
            .map(|v| v.parse().ok())
            .collect::<Option<_>>()?;
        if f.len() < 4 {
            return None;
        }
        // Older kernels stop after idle or iowait: the fields they lack count as zero.
        let at = |i: usize| f.get(i).copied().unwrap_or(0);
        let (user, nice, system, idle, iowait) = (at(0), at(1), at(2), at(3), at(4));
        let (irq, softirq, steal) = (at(5), at(6), at(7));
        let busy = user + nice + system + irq + softirq;
        Some(CpuTimes {
            busy,
            iowait,
            steal,
            total: busy + idle + iowait + steal,
        })
    }

    fn now() -> Option<CpuTimes> {
        CpuTimes::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }
}

/// The machine's load over a run, for the report and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MachineLoad {
    /// Seconds of load covered by the samples.
    pub seconds: f64,
    pub samples: u32,
    /// The host's CPUs.
    pub cores: usize,
    /// Everything the host's CPUs did, in percent of one core (200 = two cores busy).
    pub host_busy_pct: f64,
    /// What the run started and the tool used, in percent of one core.
    pub run_pct: f64,
    /// Of `run_pct`, the container engine's work (Docker runtime: dockerd and
    /// containerd whole, the run's shims and proxies); absent on other runtimes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_pct: Option<f64>,
    /// The difference, averaged over the load: load from outside the run.
    pub outside_load_pct: f64,
    /// The highest one-second outside load.
    pub outside_load_pct_max: f64,
    /// Time the hypervisor gave the host's virtual CPUs to others, in percent of all
    /// CPU time.
    pub steal_pct: f64,
    /// Time the CPUs waited for disk, in percent of all CPU time.
    pub iowait_pct: f64,
    /// True when the outside load or the steal time passed its limit.
    pub disturbed: bool,
    /// One line for people: what was measured and what it means.
    pub verdict: String,
}

/// Samples the host beside the run's own readings, once a second.
#[derive(Debug, Default)]
pub struct MachineLog {
    last: Option<(CpuTimes, std::time::Instant, Option<f64>)>,
    sum: CpuTimes,
    seconds: f64,
    busy_core_s: f64,
    run_core_s: f64,
    /// The engine's share of `run_core_s`; `None` until a runtime reports one.
    engine_core_s: Option<f64>,
    /// Host busy less the run, summed without clipping: a second whose readings put
    /// the run above the host (the run's and the host's counters are read a moment
    /// apart) gives back what the next one over-counts, so the average is unbiased.
    outside_core_s: f64,
    outside_max_pct: f64,
    /// The outside load of the latest interval, for the live view.
    outside_last_pct: f64,
    samples: u32,
}

/// The machine so far, as the live view shows it while the load goes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MachineNow {
    /// Outside load of the latest one-second interval, percent of one core.
    pub outside_load_pct: f64,
    /// Outside load averaged over the load so far (what the verdict will judge).
    pub outside_load_pct_avg: f64,
    /// Steal time so far, percent of all CPU time.
    pub steal_pct: f64,
    /// The run so far is past a limit: it would be called disturbed if it ended now.
    pub disturbed: bool,
}

impl MachineNow {
    /// The latest second alone is past the outside-load limit (a burst that the
    /// average may not show yet).
    pub fn busy_now(&self) -> bool {
        self.outside_load_pct > OUTSIDE_LOAD_LIMIT_PCT
    }
}

impl MachineLog {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes a sample now. `run_pct` is the CPU of everything the run started since
    /// the previous sample (the sum of the runtime's readings, percent of one core),
    /// `engine_pct` the container engine's work for it (counted as the run's); the
    /// tool's own CPU is read here.
    pub fn sample(&mut self, run_pct: f64, engine_pct: Option<f64>) {
        let tool_cpu_s = super::process::ProcessStats::now().cpu_s;
        let Some(times) = CpuTimes::now() else {
            return;
        };
        let now = std::time::Instant::now();
        if let Some((last, at, last_tool)) = self.last {
            let dt = now.duration_since(at).as_secs_f64();
            let tool_pct = match (tool_cpu_s, last_tool) {
                (Some(t), Some(l)) if dt > 0.0 => (t - l).max(0.0) / dt * 100.0,
                _ => 0.0,
            };
            self.add(last, times, dt, run_pct + tool_pct, engine_pct);
        }
        self.last = Some((times, now, tool_cpu_s));
    }

    /// Adds one interval from `a` to `b`, `dt` seconds long, in which the run used
    /// `run_pct` of one core, and the engine `engine_pct` more for it.
    fn add(&mut self, a: CpuTimes, b: CpuTimes, dt: f64, run_pct: f64, engine_pct: Option<f64>) {
        let d = |f: fn(&CpuTimes) -> u64| f(&b).saturating_sub(f(&a));
        let (busy, total) = (d(|t| t.busy), d(|t| t.total));
        if dt <= 0.0 || total == 0 {
            return;
        }
        self.sum.busy += busy;
        self.sum.iowait += d(|t| t.iowait);
        self.sum.steal += d(|t| t.steal);
        self.sum.total += total;
        // Clock ticks (USER_HZ) of one core: a second's worth is 100 % of a core.
        let busy_pct = busy as f64 / super::process::ticks_per_second() / dt * 100.0;
        if let Some(e) = engine_pct {
            *self.engine_core_s.get_or_insert(0.0) += e / 100.0 * dt;
        }
        let run_pct = run_pct + engine_pct.unwrap_or(0.0);
        let outside_pct = (busy_pct - run_pct).max(0.0);
        self.seconds += dt;
        self.busy_core_s += busy_pct / 100.0 * dt;
        self.run_core_s += run_pct / 100.0 * dt;
        self.outside_core_s += (busy_pct - run_pct) / 100.0 * dt;
        self.outside_max_pct = self.outside_max_pct.max(outside_pct);
        self.outside_last_pct = outside_pct;
        self.samples += 1;
    }

    /// The figures so far for the live view; `None` before the first interval.
    pub fn now(&self) -> Option<MachineNow> {
        let m = self.finish()?;
        Some(MachineNow {
            outside_load_pct: self.outside_last_pct,
            outside_load_pct_avg: m.outside_load_pct,
            steal_pct: m.steal_pct,
            disturbed: m.disturbed,
        })
    }

    /// The load over the whole run; `None` when fewer than two samples were taken
    /// (a run of under a second, or no `/proc/stat`).
    pub fn finish(&self) -> Option<MachineLoad> {
        if self.samples == 0 || self.seconds <= 0.0 {
            return None;
        }
        let pct_of_time = |j: u64| j as f64 / self.sum.total as f64 * 100.0;
        let per_s = |core_s: f64| core_s / self.seconds * 100.0;
        // Clipped once, over the whole load (each second's own figure, for the maximum
        // and the live view, is clipped at 0 by itself).
        let outside = per_s(self.outside_core_s).max(0.0);
        let steal = pct_of_time(self.sum.steal);
        let disturbed = outside > OUTSIDE_LOAD_LIMIT_PCT || steal > STEAL_LIMIT_PCT;
        Some(MachineLoad {
            seconds: self.seconds,
            samples: self.samples,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            host_busy_pct: per_s(self.busy_core_s),
            run_pct: per_s(self.run_core_s),
            engine_pct: self.engine_core_s.map(per_s),
            outside_load_pct: outside,
            outside_load_pct_max: self.outside_max_pct,
            steal_pct: steal,
            iowait_pct: pct_of_time(self.sum.iowait),
            disturbed,
            verdict: verdict(outside, self.outside_max_pct, steal, disturbed),
        })
    }
}

fn verdict(outside: f64, max: f64, steal: f64, disturbed: bool) -> String {
    let figures = format!(
        "outside load {outside:.0} % of a core on average (max {max:.0} %), steal {steal:.1} %"
    );
    if disturbed {
        format!(
            "DISTURBED: {figures}; the limits are {OUTSIDE_LOAD_LIMIT_PCT:.0} % and \
             {STEAL_LIMIT_PCT:.0} %: other work shared the machine, so these figures \
             understate what the nodes can do; measure again on a quiet machine"
        )
    } else {
        format!("quiet: {figures}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  100 10 50 1000 20 5 5 0 0 0\ncpu0 50 5 25 500 10 2 3 0 0 0\n";

    #[test]
    fn parses_the_cpu_line() {
        let t = CpuTimes::parse(STAT).unwrap();
        assert_eq!(t.busy, 100 + 10 + 50 + 5 + 5);
        assert_eq!((t.iowait, t.steal), (20, 0));
        assert_eq!(t.total, 170 + 1000 + 20);
        assert_eq!(CpuTimes::parse("intr 1 2 3"), None);
    }

    fn times(busy: u64, idle: u64, steal: u64) -> CpuTimes {
        CpuTimes {
            busy,
            iowait: 0,
            steal,
            total: busy + idle + steal,
        }
    }

    #[test]
    fn what_the_run_did_not_use_is_outside_load() {
        let mut log = MachineLog::new();
        // One second: the host was 150 % busy (150 jiffies), the run used 100 %.
        log.add(times(0, 0, 0), times(150, 50, 0), 1.0, 100.0, None);
        log.add(times(150, 50, 0), times(300, 100, 0), 1.0, 100.0, None);
        let m = log.finish().unwrap();
        assert!((m.outside_load_pct - 50.0).abs() < 1e-9, "{m:?}");
        assert!((m.host_busy_pct - 150.0).abs() < 1e-9);
        assert!(m.disturbed);
        assert!(m.verdict.starts_with("DISTURBED"), "{}", m.verdict);
    }

    #[test]
    fn a_run_that_used_the_host_alone_is_quiet() {
        let mut log = MachineLog::new();
        // The run's readings may add up to a little more than the host's count.
        log.add(times(0, 0, 0), times(95, 105, 0), 1.0, 100.0, None);
        let m = log.finish().unwrap();
        assert_eq!(m.outside_load_pct, 0.0);
        assert!(!m.disturbed, "{m:?}");
        assert!(m.verdict.starts_with("quiet"));
    }

    /// The run's counters and the host's are read a moment apart, so one second can
    /// put the run above the host and the next below it by as much: clipping each
    /// second at 0 would count the second half and drop the first (here 15 %, over
    /// the limit), while the host did only 5 % beyond the run over the two.
    #[test]
    fn a_second_where_the_run_reads_above_the_host_evens_out_the_next() {
        let mut log = MachineLog::new();
        log.add(times(0, 0, 0), times(80, 120, 0), 1.0, 100.0, None);
        log.add(times(80, 120, 0), times(210, 190, 0), 1.0, 100.0, None);
        let m = log.finish().unwrap();
        assert!((m.outside_load_pct - 5.0).abs() < 1e-9, "{m:?}");
        assert!((m.outside_load_pct_max - 30.0).abs() < 1e-9, "{m:?}");
        assert!(!m.disturbed, "{m:?}");
    }

    #[test]
    fn the_engines_work_is_the_runs() {
        let mut log = MachineLog::new();
        // 150 % busy: the nodes used 100 %, the engine 40 % for them.
        log.add(times(0, 0, 0), times(150, 50, 0), 1.0, 100.0, Some(40.0));
        let m = log.finish().unwrap();
        assert!((m.run_pct - 140.0).abs() < 1e-9, "{m:?}");
        assert_eq!(m.engine_pct, Some(40.0));
        assert!((m.outside_load_pct - 10.0).abs() < 1e-9, "{m:?}");
        let mut local = MachineLog::new();
        local.add(times(0, 0, 0), times(150, 50, 0), 1.0, 100.0, None);
        assert_eq!(local.finish().unwrap().engine_pct, None);
    }

    #[test]
    fn steal_time_disturbs_on_its_own() {
        let mut log = MachineLog::new();
        log.add(times(0, 0, 0), times(100, 95, 5), 1.0, 100.0, None);
        let m = log.finish().unwrap();
        assert!((m.steal_pct - 2.5).abs() < 1e-9, "{m:?}");
        assert!(m.disturbed);
    }

    #[test]
    fn the_live_figures_follow_the_latest_second_and_the_average() {
        let mut log = MachineLog::new();
        assert_eq!(log.now(), None);
        // A quiet second, then one with 60 % of a core from outside.
        log.add(times(0, 0, 0), times(100, 100, 0), 1.0, 100.0, None);
        log.add(times(100, 100, 0), times(260, 140, 0), 1.0, 100.0, None);
        let now = log.now().unwrap();
        assert!((now.outside_load_pct - 60.0).abs() < 1e-9, "{now:?}");
        assert!((now.outside_load_pct_avg - 30.0).abs() < 1e-9, "{now:?}");
        assert!(now.busy_now() && now.disturbed);
        log.add(times(260, 140, 0), times(360, 240, 0), 1.0, 100.0, None);
        let now = log.now().unwrap();
        assert!(!now.busy_now(), "the latest second was quiet: {now:?}");
        assert!(now.disturbed, "the average is still 20 %: {now:?}");
    }

    #[test]
    fn no_interval_no_verdict() {
        let mut log = MachineLog::new();
        assert_eq!(log.finish(), None);
        log.sample(0.0, None);
        assert_eq!(log.finish(), None, "one sample is no interval");
    }
}
