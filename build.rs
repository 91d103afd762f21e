//! Passes to the code what a report and `--version` say of the build: the optimisation
//! level the crate is compiled at (`tool.build`: the README's quick start builds the
//! crate at opt-level 0, without debug assertions) and the source commit, where the
//! source is a git checkout.
use std::path::PathBuf;
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
    // A new commit moves the branch's ref (or HEAD itself, detached, or packed-refs);
    // `--git-path` finds each where it is, in a worktree too.
    let mut refs = vec!["HEAD".to_string(), "packed-refs".to_string()];
    refs.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in refs {
        let path = git(&["rev-parse", "--git-path", &name]).map(PathBuf::from);
        // A path that does not exist would rerun this script at every build.
        if let Some(path) = path.filter(|p| p.exists()) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}
