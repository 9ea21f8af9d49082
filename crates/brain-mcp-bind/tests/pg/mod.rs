//! The test database both Postgres test files use: `cargo xtask ci` starts one under
//! `target/` and sets `BRAIN_TEST_POSTGRES_URL`.

/// The test database's URL, or `None` (the test skips, saying so) outside CI; with
/// `BRAIN_REQUIRE_POSTGRES` set, a missing URL fails the test instead.
pub(crate) fn url() -> Option<String> {
    match std::env::var("BRAIN_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os("BRAIN_REQUIRE_POSTGRES").is_none(),
                "BRAIN_REQUIRE_POSTGRES is set but BRAIN_TEST_POSTGRES_URL is not"
            );
            eprintln!("BRAIN_TEST_POSTGRES_URL is unset: skipping (cargo xtask ci sets it)");
            None
        }
    }
}
