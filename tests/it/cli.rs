//! The admin CLI against a real database file.

use crate::common::TestContext;

#[test]
fn a_new_database_is_created_and_seeded() {
    let ctx = TestContext::new();
    let stats = ctx.json(&["stats", "--json"]);
    assert!(ctx.db.exists());
    assert!(stats["prompts"].as_u64().unwrap_or(0) >= 6, "{stats}");
}
