//! Passes the optimisation level the crate is compiled at to the code, so a report says
//! which build measured it (`tool.build`: the README's quick start builds the crate at
//! opt-level 0, without debug assertions).
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let level = std::env::var("OPT_LEVEL").unwrap_or_default();
    println!("cargo:rustc-env=LNBENCH_OPT_LEVEL={level}");
}
