//! The build cache of `scripts/build-nodes.sh`: where it puts node binaries, and the
//! stamp it writes beside each (`.<binary>.version`: the version it was built from,
//! and for binaries built from a source tree, the commit of that tree).

use std::ffi::OsString;
use std::path::PathBuf;

/// The directory `scripts/build-nodes.sh` builds into: `$LNBENCH_CACHE/bin`, else
/// `$XDG_CACHE_HOME/lnbench-tui/bin`, else `~/.cache/lnbench-tui/bin`.
pub fn cache_bin_dir() -> Option<PathBuf> {
    cache_bin_dir_from(&|key| std::env::var_os(key))
}

pub(crate) fn cache_bin_dir_from(env: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let set = |key| env(key).filter(|v| !v.is_empty()).map(PathBuf::from);
    let cache = set("LNBENCH_CACHE")
        .or_else(|| set("XDG_CACHE_HOME").map(|d| d.join("lnbench-tui")))
        .or_else(|| set("HOME").map(|d| d.join(".cache").join("lnbench-tui")))?;
    Some(cache.join("bin"))
}

/// The stamp `scripts/build-nodes.sh` wrote for `binary` in the cache (`v31.99.0
/// 70d9ec7f3d4`: version, then source commit when built from a tree), if any.
pub fn built_version(binary: &str) -> Option<String> {
    stamp_in(&cache_bin_dir()?, binary)
}

/// The stamp beside a binary in `dir`.
pub fn stamp_in(dir: &std::path::Path, binary: &str) -> Option<String> {
    let stamp = dir.join(format!(".{binary}.version"));
    let text = crate::files::read_text(&stamp, crate::files::SMALL_MAX_BYTES).ok()?;
    Some(text.trim().to_string()).filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::path::Path;

    fn env_of(vars: &[(&str, &Path)]) -> impl Fn(&str) -> Option<OsString> + use<> {
        let map: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_os_str().to_owned()))
            .collect();
        move |key| map.get(key).cloned()
    }

    #[test]
    fn cache_dir_precedence() {
        let a = Path::new("/a");
        let x = Path::new("/x");
        let h = Path::new("/h");
        let all = env_of(&[("LNBENCH_CACHE", a), ("XDG_CACHE_HOME", x), ("HOME", h)]);
        assert_eq!(cache_bin_dir_from(&all), Some(PathBuf::from("/a/bin")));
        let xdg = env_of(&[("XDG_CACHE_HOME", x), ("HOME", h)]);
        assert_eq!(
            cache_bin_dir_from(&xdg),
            Some(PathBuf::from("/x/lnbench-tui/bin"))
        );
        let home = env_of(&[("HOME", h)]);
        assert_eq!(
            cache_bin_dir_from(&home),
            Some(PathBuf::from("/h/.cache/lnbench-tui/bin"))
        );
        assert_eq!(cache_bin_dir_from(&env_of(&[])), None);
    }

    #[test]
    fn stamps_are_read_beside_the_binary() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(".bitcoind.version"),
            "v31.99.0 70d9ec7f3d4\n",
        )
        .unwrap();
        assert_eq!(
            stamp_in(dir.path(), "bitcoind").as_deref(),
            Some("v31.99.0 70d9ec7f3d4")
        );
        assert_eq!(stamp_in(dir.path(), "lnd"), None);
    }
}
