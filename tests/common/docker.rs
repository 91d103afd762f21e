//! Helpers of the end-to-end tests on a real Docker engine.

use bollard::Docker;
use bollard::query_parameters::{ListContainersOptionsBuilder, ListNetworksOptionsBuilder};
use std::collections::HashMap;

pub fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// The engine, when one answers; the node images must exist then. No engine: not
/// run (None, recorded under target/tmp/not-run/) outside CI, fail under `CI=true`.
pub fn engine() -> Option<Docker> {
    match block_on(lnbench_tui::runtime::docker::connect()) {
        Ok(docker) => {
            for image in ["lnbench/lnd:v0.21.1-beta", "lnbench/btcd:v0.24.2"] {
                assert!(
                    block_on(docker.inspect_image(image)).is_ok(),
                    "image {image} is missing: run scripts/build-images.sh (scripts/setup.sh --dev does)"
                );
            }
            Some(docker)
        }
        Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true but {e}; scripts/setup.sh --dev starts one")
        }
        Err(e) => {
            // Counted by `.ci/run` as not run, under the test's own name (the test
            // harness names each test's thread after it).
            let thread = std::thread::current();
            let test = thread.name().unwrap_or("docker-engine").replace("::", "-");
            super::record_not_run(&test, &format!("no Docker engine answers: {e}"));
            None
        }
    }
}

/// [`engine`], and each of `images` in it: one missing, the test did not run
/// (recorded under its own name, as [`engine`] records it).
pub fn engine_ready(images: &[&str]) -> Option<Docker> {
    let docker = engine()?;
    let missing: Vec<&str> = (images.iter().copied())
        .filter(|image| block_on(docker.inspect_image(image)).is_err())
        .collect();
    if missing.is_empty() {
        return Some(docker);
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("docker-engine").replace("::", "-");
    let why = format!("images {missing:?} are missing (scripts/build-images.sh)");
    super::record_not_run(&test, &why);
    None
}

/// Names of the containers and networks labelled with run `run` (or with any run).
pub fn labelled(run: Option<&str>) -> (Vec<String>, Vec<String>) {
    block_on(labelled_now(run))
}

/// [`labelled`], from async code.
pub async fn labelled_now(run: Option<&str>) -> (Vec<String>, Vec<String>) {
    {
        let docker = Docker::connect_with_defaults().unwrap();
        let label = run.map_or("lnbench.run".to_string(), |r| format!("lnbench.run={r}"));
        let filters = HashMap::from([("label", vec![label.as_str()])]);
        let containers = docker
            .list_containers(Some(
                ListContainersOptionsBuilder::default()
                    .all(true)
                    .filters(&filters)
                    .build(),
            ))
            .await
            .unwrap()
            .into_iter()
            .map(|c| c.names.unwrap_or_default().join(","))
            .collect();
        let networks = docker
            .list_networks(Some(
                ListNetworksOptionsBuilder::default()
                    .filters(&filters)
                    .build(),
            ))
            .await
            .unwrap()
            .into_iter()
            .map(|n| n.name.unwrap_or_default())
            .collect();
        (containers, networks)
    }
}

/// The run's id from its `run <id>:` line on stderr, and nothing labelled with it left
/// in the engine.
pub fn assert_nothing_left_in_engine(log: &str) {
    let run_id = (log.lines())
        .find_map(|l| l.strip_prefix("run ")?.split(':').next())
        .expect("a `run <id>:` line");
    let (containers, networks) = labelled(Some(run_id));
    assert!(
        containers.is_empty() && networks.is_empty(),
        "left in the engine by run {run_id}: {containers:?} {networks:?}"
    );
}
