//! Where node binaries are found: the path the scenario names, else the build cache of
//! `scripts/build-nodes.sh`, else `PATH`.

use super::super::RuntimeError;
use crate::cache::cache_bin_dir_from;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The places looked at, in order. An explicit path is the only candidate: falling
/// back to another binary would benchmark something the user did not ask for.
fn candidates(
    explicit: Option<&Path>,
    binary: &str,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Vec<PathBuf> {
    if let Some(path) = explicit {
        return vec![path.to_path_buf()];
    }
    let mut found: Vec<PathBuf> = cache_bin_dir_from(env)
        .map(|dir| dir.join(binary))
        .into_iter()
        .collect();
    if let Some(path) = env("PATH") {
        found.extend(std::env::split_paths(&path).map(|dir| dir.join(binary)));
    }
    found
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Finds `binary` (e.g. `lnd`) for `what` (e.g. `node alice`).
/// `hint` says how to build it, for the error when it is nowhere.
pub fn find_binary(
    explicit: Option<&Path>,
    binary: &str,
    what: &str,
    hint: &str,
) -> Result<PathBuf, RuntimeError> {
    find_binary_with(explicit, binary, what, &|key| std::env::var_os(key))
        .map_err(|e| with_hint(e, hint))
}

/// A "not found" error with the driver's words on how to build the binary.
fn with_hint(e: RuntimeError, hint: &str) -> RuntimeError {
    match e {
        RuntimeError::BinaryNotFound {
            binary,
            what,
            looked,
            ..
        } => RuntimeError::BinaryNotFound {
            binary,
            what,
            looked,
            hint: hint.to_string(),
        },
        other => other,
    }
}

/// The binary of a node: [`find_binary`], except that a node whose scenario names a
/// release runs that release: the side-by-side build of it
/// (`$CACHE/versions/<implementation>/<release>/`, from `scripts/build-nodes.sh`)
/// when there is one, else the cache's own binary only if its stamp is that release.
/// A binary found on `PATH` has no stamp and is taken as it is.
pub fn find_node_binary(spec: &crate::scenario::NodeSpec) -> Result<PathBuf, RuntimeError> {
    find_node_binary_with(spec, &|key| std::env::var_os(key))
}

fn find_node_binary_with(
    spec: &crate::scenario::NodeSpec,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Result<PathBuf, RuntimeError> {
    let driver = crate::node::driver(spec.implementation);
    let what = format!("node {}", spec.name);
    let program = driver.program();
    let (binary, hint) = (program.binary, program.build_hint);
    let with_hint = |e| with_hint(e, hint);
    let wanted = match (&spec.version, &spec.binary) {
        (Some(v), None) => crate::node::driver::image_tag(v),
        _ => {
            return find_binary_with(spec.binary.as_deref(), binary, &what, env).map_err(with_hint);
        }
    };
    let cache = cache_bin_dir_from(env);
    let side_by_side = cache.as_ref().and_then(|bin| {
        let dir = (bin.parent()?)
            .join("versions")
            .join(spec.implementation.as_str())
            .join(&wanted);
        Some(dir.join(binary)).filter(|p| is_executable(p))
    });
    if let Some(path) = side_by_side {
        return Ok(path);
    }
    let found = find_binary_with(None, binary, &what, env).map_err(with_hint)?;
    let built = (cache.as_deref())
        .filter(|bin| found.parent() == Some(*bin))
        .and_then(|bin| crate::cache::stamp_in(bin, binary));
    match built {
        Some(stamp)
            if crate::node::driver::image_tag(stamp.split_whitespace().next().unwrap_or(""))
                != wanted =>
        {
            Err(RuntimeError::BinaryNotFound {
                binary: format!("{binary} {wanted}"),
                what,
                looked: format!(
                    "the build cache (it holds {binary} {stamp}) and its versions/{}/{wanted}/",
                    spec.implementation.as_str()
                ),
                hint: match crate::node::driver(spec.implementation)
                    .program()
                    .versions_variable
                {
                    Some(variable) => format!(
                        "build that release beside the pinned one: {variable}={wanted} scripts/build-nodes.sh \
                         (or pass the scenario file to scripts/build-nodes.sh), or remove version: to run {stamp}"
                    ),
                    None => format!(
                        "scripts/build-nodes.sh builds one release of {}; remove version: to run {stamp}",
                        spec.implementation.as_str()
                    ),
                },
            })
        }
        _ => Ok(found),
    }
}

fn find_binary_with(
    explicit: Option<&Path>,
    binary: &str,
    what: &str,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Result<PathBuf, RuntimeError> {
    let looked = candidates(explicit, binary, env);
    if let Some(found) = looked.iter().find(|p| is_executable(p)) {
        return Ok(found.clone());
    }
    Err(match explicit {
        Some(path) => RuntimeError::ExplicitBinaryMissing {
            what: what.to_string(),
            path: path.to_path_buf(),
        },
        None => RuntimeError::BinaryNotFound {
            binary: binary.to_string(),
            what: what.to_string(),
            hint: "run `scripts/build-nodes.sh` to build it".into(),
            looked: format!(
                "{}, then PATH",
                cache_bin_dir_from(env)
                    .map(|d| d.display().to_string())
                    .unwrap_or_else(|| "(no cache dir: HOME unset)".into())
            ),
        },
    })
}

/// A binary whose build can leave database backends out says which it has in its
/// tags stamp (`NodeDriver::program`'s `build_tags`: the quick start's lnd has no
/// PostgreSQL or etcd backend): a node that asks for a backend its binary lacks is
/// refused before anything starts, with the command that builds it in.
fn backend_built(spec: &crate::scenario::NodeSpec, binary: &Path) -> Result<(), RuntimeError> {
    let driver = crate::node::driver(spec.implementation);
    let Some(tags) = driver.program().build_tags else {
        return Ok(());
    };
    let stamp = binary.parent().map(|dir| dir.join(tags.stamp));
    let read = |s: &Path| crate::files::read_text(s, crate::files::SMALL_MAX_BYTES).ok();
    let Some(built) = stamp.and_then(|s| read(&s)) else {
        return Ok(());
    };
    let backend = driver.database(spec.database, &spec.args);
    let Some(&(_, tag)) = tags.backends.iter().find(|(b, _)| *b == backend) else {
        return Ok(());
    };
    if built.split_whitespace().any(|t| t == tag) {
        return Ok(());
    }
    let name = driver.program().binary;
    Err(RuntimeError::BinaryNotFound {
        binary: format!("{name} with the {backend} backend"),
        what: format!("node {}", spec.name),
        looked: format!("{} (built without the {tag} tag)", binary.display()),
        hint: format!(
            "this {name} was built without the {backend} backend: {}",
            tags.build_all
        ),
    })
}

/// The first line a binary prints for `--version`, with the source commit the build
/// cache recorded for it (binaries built from a source tree), for the report.
/// The versions of the binaries a local run of `scenario` starts, as the report states
/// them: `chain` and each node's name to its binary's version (snapshots keep them).
pub async fn versions(
    scenario: &crate::scenario::Scenario,
) -> Result<std::collections::BTreeMap<String, String>, RuntimeError> {
    let driver = crate::chain::driver(scenario.chain.kind);
    let what = format!("the chain ({})", driver.binary());
    let chain = find_binary(
        scenario.chain.binary.as_deref(),
        driver.binary(),
        &what,
        driver.build_hint(),
    )?;
    let mut out = std::collections::BTreeMap::new();
    out.insert(
        crate::chain::CHAIN_NAME.to_string(),
        version_of(&chain).await,
    );
    for spec in &scenario.nodes {
        out.insert(
            spec.name.clone(),
            version_of(&find_node_binary(spec)?).await,
        );
    }
    Ok(out)
}

pub(super) async fn version_of(binary: &Path) -> String {
    let stated = stated_version(binary).await;
    let name = binary.file_name().map(|n| n.to_string_lossy().into_owned());
    let stamp = (name.clone())
        .zip(binary.parent())
        .and_then(|(n, dir)| crate::cache::stamp_in(dir, &n))
        .unwrap_or_default();
    versioned(stated, name.unwrap_or_default(), &stamp)
}

/// The version a binary states, else (ldk-server has no `--version`) its name and the
/// build cache stamp's version; then the stamp's commit.
fn versioned(stated: String, name: String, stamp: &str) -> String {
    let mut words = stamp.split_whitespace();
    let (version, commit) = (words.next(), words.next());
    let stated = match (stated.is_empty(), version) {
        (false, _) => stated,
        (true, Some(v)) => format!("{name} {v}"),
        (true, None) => name,
    };
    match commit {
        Some(c) => format!("{stated} (source {c})"),
        None => stated,
    }
}

async fn stated_version(binary: &Path) -> String {
    let output = tokio::process::Command::new(binary)
        .arg("--version")
        .kill_on_drop(true)
        .output();
    match tokio::time::timeout(Duration::from_secs(10), output).await {
        Ok(Ok(out)) => String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string(),
        _ => String::new(),
    }
}

/// Finds every binary before anything starts, so a missing one fails at once instead
/// of after the chain is up.
pub(super) fn preflight(scenario: &crate::scenario::Scenario) -> anyhow::Result<()> {
    let chain = crate::chain::driver(scenario.chain.kind);
    find_binary(
        scenario.chain.binary.as_deref(),
        chain.binary(),
        &format!("the chain backend ({})", chain.binary()),
        chain.build_hint(),
    )?;
    for node in &scenario.nodes {
        let binary = find_node_binary(node)?;
        backend_built(node, &binary)?;
    }
    super::envelopes::check(scenario)?;
    Ok(())
}

/// The local runtime, its binaries found.
struct Ready(crate::scenario::Resources);

impl crate::runtime::Prepared for Ready {
    fn create(self: Box<Self>, at: &crate::runtime::Place<'_>) -> Box<dyn crate::runtime::Runtime> {
        Box::new(
            super::LocalRuntime::new(at.run_dir.to_path_buf(), at.keep).with_envelopes(&self.0),
        )
    }
}

/// Prepares the local runtime: its binaries found.
pub(in crate::runtime) fn prepare_for(
    scenario: &crate::scenario::Scenario,
) -> anyhow::Result<Box<dyn crate::runtime::Prepared>> {
    preflight(scenario)
        .map(|()| Box::new(Ready(scenario.resources.clone())) as Box<dyn crate::runtime::Prepared>)
}

pub(super) fn prepare(
    scenario: &crate::scenario::Scenario,
) -> futures::future::BoxFuture<'_, anyhow::Result<Box<dyn crate::runtime::Prepared>>> {
    Box::pin(std::future::ready(prepare_for(scenario)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(vars: &[(&str, &Path)]) -> impl Fn(&str) -> Option<OsString> + use<> {
        let map: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_os_str().to_owned()))
            .collect();
        move |key| map.get(key).cloned()
    }

    #[test]
    fn a_binary_without_a_version_flag_is_named_by_its_stamp() {
        let v = |stated: &str, stamp: &str| versioned(stated.into(), "ldk-server".into(), stamp);
        assert_eq!(
            v("", "v0.1.0 ee1c96c"),
            "ldk-server v0.1.0 (source ee1c96c)"
        );
        assert_eq!(v("", ""), "ldk-server");
        assert_eq!(
            v("lnd version 0.21.1-beta", "v0.21.1 abc"),
            "lnd version 0.21.1-beta (source abc)"
        );
        assert_eq!(v("lnd version 0.21.1-beta", ""), "lnd version 0.21.1-beta");
    }

    fn executable(path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn a_quick_start_lnd_is_refused_for_the_backends_it_lacks() {
        let dir = tempfile::tempdir().unwrap();
        let lnd = dir.path().join("lnd");
        executable(&lnd);
        let node = |args: &[&str]| {
            let mut spec = lnd_node(None);
            spec.args = args.iter().map(|a| a.to_string()).collect();
            spec
        };
        let postgres = node(&["--db.backend=postgres"]);
        let etcd = node(&["--db.backend=etcd"]);
        // No stamp (a binary on PATH, or built before stamps): taken as it is.
        assert!(backend_built(&postgres, &lnd).is_ok());
        let stamp = dir.path().join(".lnd.tags");
        std::fs::write(&stamp, "signrpc routerrpc kvdb_sqlite\n").unwrap();
        let err = backend_built(&postgres, &lnd).unwrap_err().to_string();
        assert!(err.contains("lnd with the postgres backend"), "{err}");
        assert!(
            err.contains("kvdb_postgres") && err.contains("scripts/build-nodes.sh"),
            "{err}"
        );
        let err = backend_built(&etcd, &lnd).unwrap_err().to_string();
        assert!(err.contains("kvdb_etcd"), "{err}");
        assert!(backend_built(&node(&[]), &lnd).is_ok());
        assert!(backend_built(&node(&["--db.backend=sqlite"]), &lnd).is_ok());
        std::fs::write(&stamp, "signrpc kvdb_sqlite kvdb_postgres kvdb_etcd\n").unwrap();
        assert!(backend_built(&postgres, &lnd).is_ok());
        assert!(backend_built(&etcd, &lnd).is_ok());
    }

    #[test]
    fn lookup_order_explicit_then_cache_then_path() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let path_dir = dir.path().join("path");
        let in_path = path_dir.join("lnd");
        executable(&in_path);
        let env = env_of(&[("LNBENCH_CACHE", &cache), ("PATH", &path_dir)]);

        // Only in PATH: found there.
        assert_eq!(
            find_binary_with(None, "lnd", "node a", &env).unwrap(),
            in_path
        );

        // In the cache too: the cache wins.
        let in_cache = cache.join("bin").join("lnd");
        executable(&in_cache);
        assert_eq!(
            find_binary_with(None, "lnd", "node a", &env).unwrap(),
            in_cache
        );

        // An explicit path wins over both.
        let explicit = dir.path().join("custom").join("lnd-dev");
        executable(&explicit);
        assert_eq!(
            find_binary_with(Some(&explicit), "lnd", "node a", &env).unwrap(),
            explicit
        );
    }

    #[test]
    fn missing_explicit_binary_does_not_fall_back() {
        let dir = tempfile::tempdir().unwrap();
        let path_dir = dir.path().join("path");
        executable(&path_dir.join("lnd"));
        let env = env_of(&[("PATH", &path_dir)]);
        let missing = dir.path().join("nope");
        let err = find_binary_with(Some(&missing), "lnd", "node alice", &env).unwrap_err();
        assert!(matches!(err, RuntimeError::ExplicitBinaryMissing { .. }));
        let message = err.to_string();
        assert!(message.contains("fix `binary:`"), "{message}");
        assert!(message.contains("node alice"), "{message}");
        assert!(
            message.contains(&missing.display().to_string()),
            "{message}"
        );
    }

    #[test]
    fn non_executable_files_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path_dir = dir.path().join("path");
        std::fs::create_dir_all(&path_dir).unwrap();
        std::fs::write(path_dir.join("btcd"), "not executable").unwrap();
        let env = env_of(&[("PATH", &path_dir)]);
        let err = find_binary_with(None, "btcd", "the chain", &env).unwrap_err();
        assert!(matches!(err, RuntimeError::BinaryNotFound { .. }));
        assert!(err.to_string().contains("then PATH"));
    }

    fn lnd_node(version: Option<&str>) -> crate::scenario::NodeSpec {
        crate::scenario::NodeSpec {
            name: "alice".into(),
            group: "alice".into(),
            implementation: crate::node::Implementation::Lnd,
            version: version.map(str::to_string),
            binary: None,
            image: None,
            database: crate::node::Database::Default,
            payment_engine: Default::default(),
            args: Vec::new(),
            external: None,
            resources: None,
        }
    }

    #[test]
    fn a_named_release_runs_that_release_or_says_how_to_build_it() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let pinned = cache.join("bin").join("lnd");
        executable(&pinned);
        std::fs::write(cache.join("bin").join(".lnd.version"), "v0.21.1-beta\n").unwrap();
        let env = env_of(&[("LNBENCH_CACHE", &cache)]);

        // No release named, or the pinned one (with or without the v): the cache's lnd.
        for v in [None, Some("v0.21.1-beta"), Some("0.21.1-beta")] {
            assert_eq!(find_node_binary_with(&lnd_node(v), &env).unwrap(), pinned);
        }
        // Another release, not built: refused with the command that builds it.
        let err = find_node_binary_with(&lnd_node(Some("v0.20.1-beta")), &env).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("lnd v0.20.1-beta"), "{text}");
        assert!(
            text.contains("LND_VERSIONS=v0.20.1-beta scripts/build-nodes.sh"),
            "{text}"
        );
        // Built side by side: found there.
        let old = cache.join("versions/lnd/v0.20.1-beta/lnd");
        executable(&old);
        assert_eq!(
            find_node_binary_with(&lnd_node(Some("v0.20.1-beta")), &env).unwrap(),
            old
        );
    }
}
