//! Nothing to run: build.rs does the work.
fn main() {}
