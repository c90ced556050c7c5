use super::*;

#[test]
fn test_files_and_args() {
    assert!(under_tests_dir("tests/t.rs"));
    assert!(under_tests_dir("tests/fixtures/data.json"));
    assert!(under_tests_dir("crates/a/tests/t.rs"));
    assert!(under_tests_dir("src/tests/mod.rs"));
    assert!(!under_tests_dir("tests"));
    assert!(!under_tests_dir("src/lib.rs"));
    assert!(!under_tests_dir("benches/b.rs"));
    assert!(!under_tests_dir("src/my_tests.rs"));
    let args: Vec<String> = ["--features", "x", "--", "--include-ignored"]
        .map(String::from)
        .to_vec();
    assert_eq!(
        split_args(&args),
        (
            vec!["--features".to_string(), "x".to_string()],
            vec!["--include-ignored".to_string()]
        )
    );
}
