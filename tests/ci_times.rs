//! `.ci/test-times`, the table of where CI's minutes go, read from nextest's JUnit record
//! or a `cargo test` log.
//! It runs after the tests under `set -euo pipefail`: if it fails, CI fails with every
//! test green, so it is checked here on a log as long as a real one and longer.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// A log of one test binary with `tests` tests, the test `i` taking `i` ms.
fn log_of(tests: usize) -> String {
    let mut log = String::from("     Running tests/many.rs (target/debug/deps/many-0)\n\n");
    writeln!(log, "running {tests} tests").unwrap();
    for i in 0..tests {
        writeln!(
            log,
            "test module_{i}::a_test_with_a_name_as_long_as_the_real_ones_{i} ... ok <{:.3}s>",
            i as f64 / 1000.0
        )
        .unwrap();
    }
    writeln!(
        log,
        "\ntest result: ok. {tests} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 42.50s"
    )
    .unwrap();
    log
}

fn test_times(log: &str) -> (bool, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ci-test.log");
    std::fs::write(&file, log).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/test-times");
    let out = Command::new("bash")
        .arg(script)
        .arg(&file)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_log_longer_than_a_pipe_holds_gives_the_slowest_tests_and_succeeds() {
    // 5,000 lines of about 90 bytes: several times a pipe's 64 KiB.
    let (ok, out, err) = test_times(&log_of(5_000));
    assert!(ok, "test-times failed on a long log:\n{out}\n{err}");
    assert!(out.contains("42.5  tests/many.rs"), "{out}");
    let slowest: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("fifteen slowest tests"))
        .skip(1)
        .collect();
    assert_eq!(slowest.len(), 15, "{out}");
    assert!(
        slowest[0].contains("5.0  tests/many.rs: module_4999::"),
        "{out}"
    );
    assert!(slowest[14].contains("module_4985::"), "{out}");
}

#[test]
fn a_log_without_test_times_gives_the_binaries_alone() {
    let log = "     Running tests/few.rs (target/debug/deps/few-0)\n\nrunning 1 test\n\
               test one ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; \
               0 measured; 0 filtered out; finished in 1.25s\n";
    let (ok, out, err) = test_times(log);
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains("1.2  tests/few.rs") || out.contains("1.3  tests/few.rs"),
        "{out}"
    );
    assert!(!out.contains("fifteen slowest tests"), "{out}");
}

/// nextest's JUnit record of two binaries: the times summed per binary, the slowest
/// tests first, each with its binary.
#[test]
fn a_junit_record_gives_each_binary_its_tests_summed_and_the_slowest_tests() {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <testsuites name=\"nextest-run\" tests=\"20\" failures=\"0\" errors=\"0\" time=\"60.0\">\n",
    );
    for (binary, n) in [("lnbench-tui::e2e", 12), ("lnbench-tui::cli", 8)] {
        writeln!(xml, "    <testsuite name=\"{binary}\" tests=\"{n}\">").unwrap();
        for i in 0..n {
            writeln!(
                xml,
                "        <testcase name=\"mod_{i}::a_test_{i}\" classname=\"{binary}\" \
                 timestamp=\"2026-12-07T06:00:00.000+00:00\" time=\"{}.250\">\n        </testcase>",
                if binary.ends_with("e2e") { i * 10 } else { i }
            )
            .unwrap();
        }
        xml.push_str("    </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    let (ok, out, err) = test_times(&xml);
    assert!(ok, "{out}\n{err}");
    // e2e: 10 * (0 + ... + 11) + 12 * 0.25 = 663; cli: 28 + 2 = 30.
    assert!(out.contains("summed test time"), "{out}");
    assert!(out.contains("   663.0  lnbench-tui::e2e\n"), "{out}");
    assert!(out.contains("    30.0  lnbench-tui::cli\n"), "{out}");
    let slowest: Vec<&str> = (out.lines())
        .skip_while(|l| !l.starts_with("fifteen slowest tests"))
        .skip(1)
        .collect();
    assert_eq!(slowest.len(), 15, "{out}");
    assert!(
        slowest[0].contains("110.2  lnbench-tui::e2e: mod_11::a_test_11"),
        "{out}"
    );
    assert!(
        slowest[14].contains("lnbench-tui::cli: mod_4::a_test_4"),
        "{out}"
    );
}
