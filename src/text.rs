//! Small text helpers every stage shares: one-line text, and the did-you-mean over names (keys,
//! values, test ids).

/// A commit as reports show it: its first 7 bytes, or all of it where that is not a character
/// boundary (a commit read from a document can hold anything).
pub fn short_commit(sha: &str) -> &str {
    sha.get(..7).unwrap_or(sha)
}

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

/// A document a person reads (verify.md, the job summary) with every control character but
/// the line break and the tab shown as its Unicode control picture (`ESC` as `␛`, `BEL` as
/// `␇`): text from the change (a criterion, a test's output) can carry terminal escapes and
/// bells, which must reach neither a terminal that `cat`s the file nor a renderer.
pub fn visible(s: &str) -> String {
    if !s.chars().any(is_hidden_control) {
        return s.to_string();
    }
    s.chars()
        .map(|c| match c {
            c if !is_hidden_control(c) => c,
            '\u{7f}' => '\u{2421}',
            c if (c as u32) < 0x20 => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
            _ => '\u{fffd}',
        })
        .collect()
}

fn is_hidden_control(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// `s` cut to at most `max` characters, the last of them `…` when anything was cut.
pub fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// The closest of `options` to `word` within an edit distance of 2, for "did you mean".
pub(crate) fn closest<'a>(word: &str, options: &[&'a str]) -> Option<&'a str> {
    options
        .iter()
        .map(|o| (edit_distance(word, o), *o))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, o)| o)
}

/// The names of `options` nearest to `word`, at most `n`, for "did you mean" over long names
/// (test ids): within an edit distance of a quarter of the word's length (at least 2), nearest
/// first, ties in the options' order.
pub(crate) fn nearest<'a>(word: &str, options: &[&'a str], n: usize) -> Vec<&'a str> {
    let limit = (word.chars().count() / 4).max(2);
    let mut near: Vec<(usize, usize, &str)> = options
        .iter()
        .enumerate()
        .map(|(i, o)| (edit_distance(word, o), i, *o))
        .filter(|(d, _, _)| *d <= limit)
        .collect();
    near.sort();
    near.into_iter().take(n).map(|(_, _, o)| o).collect()
}

/// Levenshtein distance over characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = Vec::with_capacity(b.len() + 1);
        cur.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != *cb);
            cur.push(substitute.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_and_bells_are_shown_never_sent() {
        let shown = super::visible("a\u{1b}[31mred\u{7}\r\nb\tc\u{9b}d\u{7f}");
        assert_eq!(
            shown,
            "a\u{241b}[31mred\u{2407}\u{240d}\nb\tc\u{fffd}d\u{2421}"
        );
        assert_eq!(super::visible("plain\n"), "plain\n");
    }
}
