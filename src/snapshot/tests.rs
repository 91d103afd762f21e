//! The manifest, the network and version checks, and tamper detection, on small
//! directories of made-up data (the end-to-end test saves and restores real nodes).

use super::*;
use crate::scenario::Scenario;
use std::collections::BTreeMap;

const BASE: &str = "\
name: snap
runtime: local
chain:
  implementation: btcd
nodes:
  alice:
    implementation: lnd
  bob:
    implementation: lnd
channels:
  - from: alice
    to: bob
    capacity_sat: 1000000
workload:
  kind: keysend
  senders: [alice]
  receiver: bob
  amount_msat: 1000
  concurrency: 1
  stop:
    payments: 10
";

fn scenario(text: &str) -> Scenario {
    crate::scenario::parse(Path::new("snap.yaml"), text, crate::runtime::capabilities)
        .expect("scenario parses")
}

fn versions() -> BTreeMap<String, String> {
    [
        ("chain", "btcd 0.24.2"),
        ("alice", "lnd 0.19.0"),
        ("bob", "lnd 0.19.0"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// A run directory with a chain and two nodes' files (and logs a snapshot leaves out).
fn run_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, files) in [
        ("chain", vec!["regtest/blocks/000.fdb", "output.log"]),
        (
            "alice",
            vec![
                "data/chain/channel.db",
                "tls.cert",
                "logs/lnd.log",
                "output.log",
            ],
        ),
        ("bob", vec!["data/chain/channel.db", "tls.cert"]),
    ] {
        for f in files {
            let path = dir.path().join(name).join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, format!("{name}/{f} contents")).unwrap();
        }
    }
    dir
}

/// A snapshot of [`run_dir`] saved for BASE.
fn saved() -> (tempfile::TempDir, std::path::PathBuf) {
    let run = run_dir();
    let out = tempfile::tempdir().unwrap();
    let to = out.path().join("snap");
    let s = scenario(BASE);
    let manifest = Manifest::new(&s, versions(), "2026-11-26T00:00:00Z".into(), 9.5);
    let names = ["chain", "alice", "bob"].map(String::from);
    let leave_out = ["alice/lnd.conf".to_string()];
    let saved = save(run.path(), &names, &leave_out, &to, manifest, BASE).unwrap();
    assert_eq!(saved.files, 5, "{saved:?}");
    (out, to)
}

fn err_text(e: SnapshotError) -> String {
    e.to_string()
}

#[test]
fn the_manifest_lists_every_kept_file_with_its_sha256() {
    let (_out, to) = saved();
    let text = std::fs::read_to_string(to.join(MANIFEST)).unwrap();
    let m = Manifest::parse(&text, &to.join(MANIFEST)).unwrap();
    let paths: Vec<&str> = m.files.keys().map(String::as_str).collect();
    assert_eq!(
        paths,
        [
            "alice/data/chain/channel.db",
            "alice/tls.cert",
            "bob/data/chain/channel.db",
            "bob/tls.cert",
            "chain/regtest/blocks/000.fdb"
        ]
    );
    let entry = &m.files["alice/tls.cert"];
    // sha256 of the file's text, as `sha256sum` gives it.
    let body = "alice/tls.cert contents";
    assert_eq!(entry.bytes, body.len() as u64);
    assert_eq!(
        entry.sha256,
        hash_file(&to.join("data/alice/tls.cert")).unwrap()
    );
    assert_eq!(
        hash_file(&to.join("data/alice/tls.cert")).unwrap().len(),
        64
    );
    assert_eq!(m.network[0], "chain btcd");
    assert!(
        m.network.iter().any(|l| l.starts_with("node bob lnd")),
        "{:?}",
        m.network
    );
    assert_eq!(m.versions, versions());
    assert_eq!(std::fs::read_to_string(to.join(SCENARIO)).unwrap(), BASE);
    // Logs and the files written at each start are left out.
    assert!(!to.join("data/alice/lnd.conf").exists());
    assert!(!to.join("data/alice/output.log").exists());
    assert!(!to.join("data/alice/logs").exists());
}

#[test]
fn the_sha256_is_the_standard_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("abc");
    std::fs::write(&path, "abc").unwrap();
    assert_eq!(
        hash_file(&path).unwrap(),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn a_snapshots_tree_is_private_and_a_secret_keeps_its_mode_from_the_first_byte() {
    use std::os::unix::fs::PermissionsExt;
    let run = run_dir();
    let secret = run.path().join("alice/data/chain/channel.db");
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = tempfile::tempdir().unwrap();
    let to = out.path().join("snap");
    let into = to.join("data/alice");
    let copied = copy_tree(&run.path().join("alice"), &into, &|_| true).unwrap();
    assert!(!copied.is_empty());
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&into.join("data/chain/channel.db")), 0o600);
    for dir in [&to, &to.join("data"), &into, &into.join("data/chain")] {
        assert_eq!(mode(dir), 0o700, "{}", dir.display());
    }

    // A link planted where a copy goes is refused, never written through.
    let elsewhere = out.path().join("elsewhere");
    std::fs::write(&elsewhere, "untouched").unwrap();
    let again = out.path().join("again");
    std::fs::create_dir_all(again.join("data/chain")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, again.join("data/chain/channel.db")).unwrap();
    let err = copy_tree(&run.path().join("alice"), &again, &|_| true).unwrap_err();
    assert!(err.to_string().contains("channel.db"), "{err}");
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "untouched");
}

#[test]
fn a_saved_snapshot_leaves_no_temporary_file_beside_its_manifest() {
    let (_out, to) = saved();
    let mut names: Vec<String> = std::fs::read_dir(&to)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [DATA, MANIFEST, SCENARIO]);
}

#[test]
fn a_snapshot_is_restored_file_for_file() {
    let (_out, to) = saved();
    let (m, _) = check(&to, &scenario(BASE), &versions(), false).unwrap();
    let run = tempfile::tempdir().unwrap();
    let bytes = restore(&to, &m, run.path()).unwrap();
    assert_eq!(bytes, m.files.values().map(|f| f.bytes).sum::<u64>());
    let back = std::fs::read_to_string(run.path().join("bob/data/chain/channel.db")).unwrap();
    assert_eq!(back, "bob/data/chain/channel.db contents");
}

#[test]
fn a_changed_file_is_refused_by_name() {
    let (_out, to) = saved();
    std::fs::write(to.join("data/bob/tls.cert"), "not the saved cert").unwrap();
    let (m, _) = check(&to, &scenario(BASE), &versions(), false).unwrap();
    let run = tempfile::tempdir().unwrap();
    let e = restore(&to, &m, run.path()).unwrap_err();
    assert!(e.is_bad_input());
    let text = err_text(e);
    assert!(
        text.contains("data/bob/tls.cert: the snapshot was changed"),
        "{text}"
    );
    assert!(text.contains("sha256"), "{text}");
}

#[test]
fn a_missing_or_added_file_is_refused_by_name() {
    let (_out, to) = saved();
    std::fs::remove_file(to.join("data/alice/tls.cert")).unwrap();
    let (m, _) = check(&to, &scenario(BASE), &versions(), false).unwrap();
    let e = err_text(restore(&to, &m, tempfile::tempdir().unwrap().path()).unwrap_err());
    // Located at the file's line in the manifest.
    assert!(e.contains("manifest.json:"), "{e}");
    assert!(e.contains("alice/tls.cert is missing"), "{e}");

    let (_out2, to2) = saved();
    std::fs::write(to2.join("data/bob/extra"), "x").unwrap();
    let (m, _) = check(&to2, &scenario(BASE), &versions(), false).unwrap();
    let e = err_text(restore(&to2, &m, tempfile::tempdir().unwrap().path()).unwrap_err());
    assert!(
        e.contains("data/bob/extra") && e.contains("not in manifest.json"),
        "{e}"
    );
}

/// `--upgrade`: a node's other version is a migration from the saved version to this
/// one, and the rest is checked as without it; the chain's other version is refused.
#[test]
fn with_upgrade_a_node_of_another_version_migrates_and_the_chain_does_not() {
    let (_out, to) = saved();
    let mut here = versions();
    here.insert("bob".into(), "lnd 0.20.0".into());
    let (_, migrations) = check(&to, &scenario(BASE), &here, true).unwrap();
    assert_eq!(
        migrations,
        [Migration {
            node: "bob".into(),
            from: "lnd 0.19.0".into(),
            to: "lnd 0.20.0".into(),
        }]
    );
    let (_, none) = check(&to, &scenario(BASE), &versions(), true).unwrap();
    assert!(none.is_empty(), "{none:?}");
    here.insert("chain".into(), "btcd 0.25.0".into());
    let text = err_text(check(&to, &scenario(BASE), &here, true).unwrap_err());
    assert!(text.contains("the chain was saved with"), "{text}");
    // Another network is refused still.
    let carol = BASE.replace("bob", "carol");
    let e = check(&to, &scenario(&carol), &versions(), true).unwrap_err();
    assert!(err_text(e).contains("saved for another network"));
}

#[test]
fn another_version_is_refused_with_both_versions_and_the_line() {
    let (_out, to) = saved();
    let mut here = versions();
    here.insert("bob".into(), "lnd 0.20.0".into());
    let e = check(&to, &scenario(BASE), &here, false).unwrap_err();
    assert!(!e.is_bad_input(), "the machine's binaries: exit 3");
    let text = err_text(e);
    assert!(
        text.contains("node bob was saved with \"lnd 0.19.0\""),
        "{text}"
    );
    assert!(text.contains("runs \"lnd 0.20.0\""), "{text}");
    let manifest = std::fs::read_to_string(to.join(MANIFEST)).unwrap();
    let line = manifest
        .lines()
        .position(|l| l.trim_start().starts_with("\"bob\": \"lnd"))
        .unwrap()
        + 1;
    assert!(
        text.contains(&format!("manifest.json:{line}:")),
        "{line}: {text}"
    );
}

#[test]
fn another_network_is_refused_with_the_part_that_differs() {
    let (_out, to) = saved();
    let carol = BASE.replace("bob", "carol");
    let e = check(&to, &scenario(&carol), &versions(), false).unwrap_err();
    assert!(e.is_bad_input());
    let text = err_text(e);
    assert!(text.contains("saved for another network"), "{text}");
    assert!(
        text.contains("it has `node bob lnd") && text.contains("the scenario `node carol lnd"),
        "{text}"
    );
    assert!(text.contains("manifest.json:"), "{text}");

    let more = BASE.replace("capacity_sat: 1000000", "capacity_sat: 2000000");
    let text = err_text(check(&to, &scenario(&more), &versions(), false).unwrap_err());
    assert!(text.contains("capacity_sat=2000000"), "{text}");
}

#[test]
fn no_snapshot_and_a_garbled_manifest_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let none = dir.path().join("none");
    let e = check(&none, &scenario(BASE), &versions(), false).unwrap_err();
    assert!(e.is_bad_input());
    let text = err_text(e);
    assert!(
        text.contains("none: no snapshot there") && text.contains("does not exist"),
        "{text}"
    );

    let (_out, to) = saved();
    std::fs::write(
        to.join(MANIFEST),
        "{\n  \"format\": 1,\n  \"scenario\": 3\n}\n",
    )
    .unwrap();
    let text = err_text(check(&to, &scenario(BASE), &versions(), false).unwrap_err());
    assert!(text.contains("manifest.json:3:"), "{text}");
}

#[test]
fn a_snapshot_is_never_written_over_another() {
    let (_out, to) = saved();
    let run = run_dir();
    let m = Manifest::new(&scenario(BASE), versions(), String::new(), 0.0);
    let e = save(run.path(), &["chain".into()], &[], &to, m, BASE).unwrap_err();
    assert!(err_text(e).contains("not empty"));
}

#[test]
fn sweeps_and_databases_outside_the_data_dirs_are_refused() {
    assert!(refusal(&scenario(BASE)).is_none());
    let pg = BASE.replacen(
        "bob:\n    implementation: lnd",
        "bob:\n    implementation: lnd\n    database: postgres",
        1,
    );
    assert!(refusal(&scenario(&pg)).is_none(), "PostgreSQL is dumped");
    let docker = pg.replacen("runtime: local", "runtime: docker", 1);
    assert_ne!(docker, pg);
    assert!(refusal(&scenario(&docker)).is_none(), "in Docker too");
    let etcd = BASE.replacen(
        "bob:\n    implementation: lnd",
        "bob:\n    implementation: lnd\n    args: [\"--db.backend=etcd\"]",
        1,
    );
    let text = err_text(refusal(&scenario(&etcd)).expect("refused"));
    assert!(text.starts_with("snap.yaml:8:3:"), "{text}");
    assert!(text.contains("etcd"), "{text}");
}

#[test]
fn a_sweep_on_one_network_is_restored_and_one_over_several_networks_is_refused() {
    let with = |sweep: &str| scenario(&format!("{BASE}history: {{ concurrency: 2 }}\n{sweep}"));
    for one in [
        "sweep: { history: [100, 500] }\n",
        "sweep: { history: [100, 500], concurrency: [1, 4] }\n",
    ] {
        assert!(refusal(&with(one)).is_none(), "{one}");
    }
    let several = with("sweep: { history: [100], db_backend: [bbolt, sqlite] }\n");
    let text = err_text(refusal(&several).expect("refused"));
    assert!(text.starts_with("snap.yaml:"), "{text}");
    assert!(text.contains("sets up several networks"), "{text}");
}

#[test]
fn a_channel_between_two_ldk_nodes_is_refused_and_one_ldk_end_is_not() {
    let ldk = |text: &str, node: &str| {
        text.replacen(
            &format!("{node}:\n    implementation: lnd"),
            &format!("{node}:\n    implementation: ldk"),
            1,
        )
        .replace("btcd", "bitcoind")
        .replace("kind: keysend", "kind: invoice")
    };
    let one = ldk(BASE, "alice");
    assert!(refusal(&scenario(&one)).is_none(), "{one}");
    let both = ldk(&one, "bob");
    let text = err_text(refusal(&scenario(&both)).expect("refused"));
    assert!(text.starts_with("snap.yaml:10:1:"), "{text}");
    assert!(text.contains("alice - bob joins two LDK nodes"), "{text}");
}

#[test]
fn names_resolve_into_the_cache_and_paths_stay_paths() {
    assert_eq!(resolve(Path::new("./x")), Path::new("./x"));
    assert_eq!(resolve(Path::new("a/b")), Path::new("a/b"));
    // A directory of that name here is a path (`src` is one in the crate's root).
    assert_eq!(resolve(Path::new("src")), Path::new("src"));
    if let Some(cache) = cache_dir() {
        assert_eq!(resolve(Path::new("two-lnd")), cache.join("two-lnd"));
    }
}

#[test]
fn the_scenario_field_is_located_and_resolved_beside_the_scenario() {
    let text = format!("{BASE}snapshot: ./saved/two\n");
    let s = crate::scenario::parse(
        Path::new("dir/snap.yaml"),
        &text,
        crate::runtime::capabilities,
    )
    .unwrap();
    let field = s.snapshot.expect("snapshot:");
    let line = text.lines().count();
    assert_eq!(field.at, format!("dir/snap.yaml:{line}:11"));
    assert_eq!(
        resolve_field(&s.path, &field.value),
        Path::new("dir/./saved/two")
    );
    if let Some(cache) = cache_dir() {
        assert_eq!(resolve_field(&s.path, "two"), cache.join("two"));
    }
    assert!(scenario(BASE).snapshot.is_none());
}

/// BASE with bob's `args:`.
fn bob_with(args: &str) -> Scenario {
    let text = BASE.replace(
        "  bob:\n    implementation: lnd\n",
        &format!("  bob:\n    implementation: lnd\n    args: [{args}]\n"),
    );
    scenario(&text)
}

#[test]
fn native_sql_added_on_a_key_value_sql_database_is_a_migration_not_another_network() {
    let saved = network_form(&bob_with("--db.backend=sqlite"));
    let native = bob_with("--db.backend=sqlite, --db.use-native-sql");
    let (wanted, migrations) = network_to_restore(&native, &saved);
    assert_eq!(wanted, saved);
    assert_eq!(
        migrations,
        [Migration {
            node: "bob".into(),
            from: "sqlite".into(),
            to: "sqlite-native".into()
        }]
    );
    // Restored as saved: nothing to migrate.
    let same = bob_with("--db.backend=sqlite");
    assert_eq!(network_to_restore(&same, &saved), (saved.clone(), vec![]));
    // Not migrations: the flag on bbolt (LND has no native schema there), the flag
    // beside another change, and a snapshot saved natively restored to key-value.
    for (saved, wanted) in [
        (
            network_form(&scenario(BASE)),
            bob_with("--db.use-native-sql"),
        ),
        (
            saved.clone(),
            bob_with("--db.backend=sqlite, --db.use-native-sql, --norest"),
        ),
        (network_form(&native), bob_with("--db.backend=sqlite")),
    ] {
        let (lines, migrations) = network_to_restore(&wanted, &saved);
        assert!(migrations.is_empty(), "{migrations:?}");
        assert_ne!(lines, saved);
    }
}
