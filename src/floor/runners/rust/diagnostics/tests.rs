use super::*;

#[test]
fn names_come_from_rustc_unresolved_import_messages() {
    assert_eq!(
        unresolved_names("unresolved import `crate::clamp`"),
        ["clamp"]
    );
    assert_eq!(
        unresolved_names("unresolved imports `util::a`, `util::b`"),
        ["a", "b"]
    );
    assert!(unresolved_names("cannot find function `clamp` in this scope").is_empty());
    assert!(unresolved_names("unresolved import `util::*`").is_empty());
}
