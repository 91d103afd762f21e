//! docs/ARCHITECTURE.md stays true: every file path it names exists (a rename or a
//! move that forgets the map fails here).

use std::path::Path;

#[test]
fn every_path_the_architecture_page_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let mut named = 0;
    let mut missing = Vec::new();
    for quoted in text.split('`').skip(1).step_by(2) {
        // A file (`src/run/plan.rs`, or `node/fake.rs` under src/); `<name>` is a
        // recipe's placeholder and `*` a pattern, not files.
        let is_path = quoted.contains('/')
            && (quoted.ends_with(".rs") || quoted.ends_with(".sh") || quoted.ends_with(".md"));
        if !is_path || quoted.contains(['<', ' ', '*']) {
            continue;
        }
        named += 1;
        if !root.join(quoted).exists() && !root.join("src").join(quoted).exists() {
            missing.push(quoted.to_string());
        }
    }
    assert!(
        named >= 20,
        "only {named} paths found: did the page change shape?"
    );
    assert!(missing.is_empty(), "named but missing: {missing:?}");
}
