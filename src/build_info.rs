//! Which build this binary is: its version, how it was optimised and the source commit
//! it was built from, as `--version` and the report's `tool` say them.

use std::sync::LazyLock;

/// The build's name: `release`, `quick` (the README's first look: the crate itself
/// unoptimised, the payment path's dependencies at opt-level 1), `debug`, or the
/// optimisation level of another profile.
pub fn build() -> String {
    build_name(cfg!(debug_assertions), env!("LNBENCH_OPT_LEVEL"))
}

pub(crate) fn build_name(debug_assertions: bool, opt_level: &str) -> String {
    match (debug_assertions, opt_level) {
        (true, _) => "debug".into(),
        (false, "3") => "release".into(),
        // Only the quick profile leaves the crate unoptimised without debug assertions.
        (false, "0") => "quick".into(),
        (false, level) => format!("opt-level {level}"),
    }
}

/// The commit the binary was built from (12 hex digits), None when it was built
/// outside a git checkout.
pub fn commit() -> Option<&'static str> {
    Some(env!("LNBENCH_COMMIT")).filter(|c| !c.is_empty())
}

/// `--version`'s text after the binary's name: `0.1.0 (commit 0123456789ab, debug
/// build)`.
pub fn version() -> &'static str {
    static VERSION: LazyLock<String> = LazyLock::new(|| {
        let commit = commit().map_or("commit unknown".into(), |c| format!("commit {c}"));
        format!(
            "{} ({commit}, {} build)",
            env!("CARGO_PKG_VERSION"),
            build()
        )
    });
    &VERSION
}

#[cfg(test)]
mod tests {
    use super::{build_name, commit, version};

    #[test]
    fn the_build_is_named_by_its_debug_assertions_and_optimisation() {
        assert_eq!(build_name(false, "3"), "release");
        assert_eq!(build_name(false, "0"), "quick");
        assert_eq!(build_name(false, "1"), "opt-level 1");
        assert_eq!(build_name(true, "0"), "debug");
        assert_eq!(build_name(true, "3"), "debug");
        assert_eq!(build_name(false, "s"), "opt-level s");
    }

    /// The tests are built from this checkout: the version names its commit.
    #[test]
    fn the_version_names_the_commit_and_the_build() {
        let v = version();
        assert!(v.starts_with(env!("CARGO_PKG_VERSION")), "{v}");
        match commit() {
            Some(c) => {
                assert_eq!(c.len(), 12, "{c}");
                assert!(c.chars().all(|x| x.is_ascii_hexdigit()), "{c}");
                assert!(v.contains(&format!("commit {c}")), "{v}");
            }
            None => assert!(v.contains("commit unknown"), "{v}"),
        }
        assert!(v.ends_with(" build)"), "{v}");
    }
}
