//! The Docker engine's work for the run, read from `/proc`: dockerd and containerd
//! (their whole CPU while the run goes: they cannot say for whom they worked, and
//! during a run they work for it: stats streams, logs, inspections), the
//! containerd shim of each of the run's containers (named by the container's id on
//! its command line) and the docker-proxy of each port published from one of them
//! (named by the container's address, `-container-ip`). The machine's outside load
//! counts this as the run's; an engine that also serves other containers on the host
//! makes their share of its work look like the run's.

use crate::metrics::process::{cpu_seconds, read_stat};
use std::collections::HashMap;
use std::time::Instant;

/// The run's containers as the engine's processes name them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunContainers {
    /// Full container ids.
    pub ids: Vec<String>,
    /// Their addresses on the run's network.
    pub ips: Vec<String>,
}

/// The `comm` of every process [`works_for_run`] can count: only these have their
/// command line read.
const ENGINE_COMMS: [&str; 4] = ["dockerd", "containerd", "containerd-shim", "docker-proxy"];

/// True when the process (its `/proc/<pid>/comm` and NUL-separated `cmdline`) works
/// for the run: the engine's daemons, or a shim or proxy of one of its containers.
pub fn works_for_run(comm: &str, cmdline: &str, run: &RunContainers) -> bool {
    let args: Vec<&str> = cmdline.split('\0').filter(|a| !a.is_empty()).collect();
    match comm.trim_end() {
        "dockerd" | "containerd" => true,
        // The kernel cuts comm at 15 bytes: containerd-shim-runc-v2 reads
        // containerd-shim. The v2 shim takes `-id <id>`; the v1 shim a work dir
        // ending in the id.
        "containerd-shim" => args
            .iter()
            .any(|a| (run.ids.iter()).any(|id| *a == id || a.ends_with(&format!("/{id}")))),
        "docker-proxy" => (args.windows(2))
            .any(|w| w[0] == "-container-ip" && run.ips.iter().any(|ip| ip == w[1])),
        _ => false,
    }
}

/// CPU seconds spent between two readings (pid -> CPU seconds): what each process
/// seen both times used, plus all of a process new since the first (it started in
/// between). A process gone since takes its last interval with it.
pub fn interval_cpu_s(before: &HashMap<u32, f64>, now: &HashMap<u32, f64>) -> f64 {
    now.iter()
        .map(|(pid, s)| (s - before.get(pid).copied().unwrap_or(0.0)).max(0.0))
        .sum()
}

/// Every process under `/proc` that works for the run, with its CPU seconds now.
pub fn read_proc(run: &RunContainers) -> HashMap<u32, f64> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return HashMap::new();
    };
    entries
        .filter_map(|e| {
            let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
            if !ENGINE_COMMS.contains(&comm.trim_end()) {
                return None;
            }
            let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).ok()?;
            works_for_run(&comm, &cmdline, run)
                .then(|| Some((pid, cpu_seconds(&read_stat(pid)?)?)))?
        })
        .collect()
}

/// Turns successive readings of the engine's processes into CPU % of one core.
#[derive(Debug, Default)]
pub struct EngineCpu {
    previous: Option<(HashMap<u32, f64>, Instant)>,
    /// The run's containers' addresses by id, asked of the engine once each.
    pub ips: HashMap<String, String>,
}

impl EngineCpu {
    /// The engine's CPU since the previous reading, percent of one core; `None` the
    /// first time (nothing to compare with) and where `/proc` shows no engine.
    pub fn record(&mut self, now: HashMap<u32, f64>, at: Instant) -> Option<f64> {
        let before = self.previous.replace((now, at));
        let ((before, then), (now, _)) = (before?, self.previous.as_ref()?);
        let wall = at.duration_since(then).as_secs_f64();
        (wall > 0.0 && !now.is_empty()).then(|| interval_cpu_s(&before, now) / wall * 100.0)
    }
}

impl super::DockerRuntime {
    /// The engine's CPU for the run since the previous call, percent of one core (see
    /// the module). Asks the engine only for a container's address it does not know.
    pub(super) async fn engine_cpu(&mut self) -> Option<f64> {
        let unknown: Vec<String> = {
            let engine = self.shared.engine.lock().unwrap_or_else(|e| e.into_inner());
            (self.containers.iter())
                .filter(|c| !engine.ips.contains_key(&c.id))
                .map(|c| c.id.clone())
                .collect()
        };
        let mut found = Vec::new();
        for id in unknown {
            if let Some(ip) = self.network_ip(&id).await {
                found.push((id, ip));
            }
        }
        let run = {
            let mut engine = self.shared.engine.lock().unwrap_or_else(|e| e.into_inner());
            engine.ips.extend(found);
            RunContainers {
                ids: self.containers.iter().map(|c| c.id.clone()).collect(),
                ips: (self.containers.iter())
                    .filter_map(|c| engine.ips.get(&c.id).cloned())
                    .collect(),
            }
        };
        let now = tokio::task::spawn_blocking(move || read_proc(&run))
            .await
            .ok()?;
        let mut engine = self.shared.engine.lock().unwrap_or_else(|e| e.into_inner());
        engine.record(now, Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "4f1c2d3e4f1c2d3e4f1c2d3e4f1c2d3e4f1c2d3e4f1c2d3e4f1c2d3e4f1c2d3e";

    fn run() -> RunContainers {
        RunContainers {
            ids: vec![ID.into()],
            ips: vec!["172.18.0.2".into()],
        }
    }

    /// `cmdline` as `/proc` holds it: arguments separated (and ended) by NUL.
    fn cmdline(args: &str) -> String {
        args.split(' ').map(|a| format!("{a}\0")).collect()
    }

    #[test]
    fn the_engine_daemons_work_for_the_run() {
        let dockerd = cmdline("/usr/sbin/dockerd -H fd://");
        assert!(works_for_run("dockerd\n", &dockerd, &run()));
        let containerd = cmdline(
            "containerd --config /var/run/docker/containerd/containerd.toml --log-level info",
        );
        assert!(works_for_run("containerd\n", &containerd, &run()));
        assert!(!works_for_run("bash\n", &cmdline("bash"), &run()));
    }

    #[test]
    fn a_shim_is_the_runs_when_it_names_one_of_its_containers() {
        let v2 = cmdline(&format!(
            "/usr/bin/containerd-shim-runc-v2 -namespace moby -id {ID} -address \
             /var/run/docker/containerd/containerd.sock"
        ));
        assert!(works_for_run("containerd-shim\n", &v2, &run()));
        let v1 = cmdline(&format!(
            "containerd-shim -namespace moby -workdir \
             /var/lib/containerd/io.containerd.runtime.v1.linux/moby/{ID} -address \
             /run/containerd/containerd.sock"
        ));
        assert!(works_for_run("containerd-shim\n", &v1, &run()));
        let other = v2.replace(ID, &"9".repeat(64));
        assert!(!works_for_run("containerd-shim\n", &other, &run()));
        // An id prefix is not the container.
        let prefix = v2.replace(ID, &ID[..12]);
        assert!(!works_for_run("containerd-shim\n", &prefix, &run()));
    }

    #[test]
    fn a_proxy_is_the_runs_when_it_forwards_to_one_of_its_containers() {
        let proxy = |ip: &str| {
            cmdline(&format!(
                "/usr/sbin/docker-proxy -proto tcp -host-ip 0.0.0.0 -host-port 49153 \
                 -container-ip {ip} -container-port 10009"
            ))
        };
        assert!(works_for_run(
            "docker-proxy\n",
            &proxy("172.18.0.2"),
            &run()
        ));
        assert!(!works_for_run(
            "docker-proxy\n",
            &proxy("172.18.0.22"),
            &run()
        ));
        assert!(!works_for_run(
            "docker-proxy\n",
            &proxy("172.17.0.2"),
            &run()
        ));
    }

    #[test]
    fn an_interval_counts_processes_seen_twice_and_new_ones_whole() {
        let before = HashMap::from([(1, 10.0), (2, 5.0), (3, 1.0)]);
        // 1 used 0.5 s, 2 none, 3 is gone, 4 is new with 0.25 s.
        let now = HashMap::from([(1, 10.5), (2, 5.0), (4, 0.25)]);
        assert!((interval_cpu_s(&before, &now) - 0.75).abs() < 1e-9);
        // A pid reused by a younger process never counts negative.
        let reused = HashMap::from([(1, 2.0)]);
        assert_eq!(interval_cpu_s(&before, &reused), 0.0);
    }

    #[test]
    fn the_first_reading_gives_no_figure_the_next_a_percent_of_one_core() {
        let mut engine = EngineCpu::default();
        let t0 = Instant::now();
        assert_eq!(engine.record(HashMap::from([(1, 10.0)]), t0), None);
        let t1 = t0 + std::time::Duration::from_secs(2);
        let pct = engine.record(HashMap::from([(1, 10.5)]), t1).unwrap();
        assert!((pct - 25.0).abs() < 1e-9, "{pct}");
        let t2 = t1 + std::time::Duration::from_secs(1);
        assert_eq!(engine.record(HashMap::new(), t2), None, "no engine seen");
    }

    #[test]
    fn reads_this_hosts_proc_without_failing() {
        // Whatever runs here, nothing of a made-up run is a shim or proxy of it.
        let found = read_proc(&run());
        assert!(found.values().all(|s| *s >= 0.0));
    }
}
