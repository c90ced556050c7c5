//! Small text helpers every stage shares.

/// Text from the acceptance set or from a run on one line: a line break in it would break the
/// report's layout, and in CI logs a line starting with `::` is a workflow command.
pub fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
                ' '
            } else {
                c
            }
        })
        .collect()
}
