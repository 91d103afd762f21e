//! Passes to the code what a report and `--version` say of the build: the optimisation
//! level the crate is compiled at (`tool.build`: the README's quick start builds the
//! crate at opt-level 0, without debug assertions) and the source commit, where the
//! source is a git checkout.
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let level = std::env::var("OPT_LEVEL").unwrap_or_default();
    println!("cargo:rustc-env=LNBENCH_OPT_LEVEL={level}");
    let git = |args: &[&str]| {
        let out = Command::new("git").args(args).output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        out.status.success().then(|| text.trim().to_string())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_default();
    println!("cargo:rustc-env=LNBENCH_COMMIT={commit}");
    // A new commit moves the branch's ref (or HEAD itself, detached, or packed-refs).
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        let dir = Path::new(&dir);
        let mut watched = vec![dir.join("HEAD"), dir.join("packed-refs")];
        if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watched.push(dir.join(head));
        }
        // A path that does not exist would rerun this script at every build.
        for path in watched.iter().filter(|p| p.exists()) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}
