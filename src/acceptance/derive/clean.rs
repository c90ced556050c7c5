//! Step 4, cleaning a criterion's text of Markdown, and its comparison key.

/// The text of a criterion without Markdown: links keep their text, images, bare URLs and HTML
/// tags go, emphasis markers go, inline code keeps its text (`keep_code`) or goes; whitespace is
/// collapsed.
pub(super) fn clean(s: &str, keep_code: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'`' => {
                let run = bytes[i..].iter().take_while(|c| **c == b'`').count();
                let fence = &s[i..i + run];
                // Bounded, so that many unmatched backticks stay linear.
                let window = bounded(s, i + run, MAX_SPAN);
                match window.find(fence) {
                    Some(len) => {
                        if keep_code {
                            out.push_str(s[i + run..i + run + len].trim());
                        }
                        i += run + len + run;
                    }
                    None => i += run,
                }
            }
            b'!' if bytes.get(i + 1) == Some(&b'[') => match link_at(s, i + 1) {
                Some((_, end)) => i = end,
                None => {
                    out.push('!');
                    i += 1;
                }
            },
            b'[' => match link_at(s, i) {
                Some((text, end)) => {
                    out.push_str(&clean(text, keep_code));
                    i = end;
                }
                None => {
                    out.push('[');
                    i += 1;
                }
            },
            b'<' => match tag_end(s, i) {
                Some(end) => {
                    out.push(' ');
                    i = end;
                }
                None => {
                    out.push('<');
                    i += 1;
                }
            },
            b'*' | b'_' | b'~' if bytes.get(i + 1) == Some(&b) => i += 2,
            b'h' if (s[i..].starts_with("https://") || s[i..].starts_with("http://"))
                && (i == 0 || bytes[i - 1].is_ascii_whitespace() || bytes[i - 1] == b'(') =>
            {
                i += s[i..].find(char::is_whitespace).unwrap_or(s.len() - i);
            }
            _ => {
                // Copy up to the next byte that may open markup in one go (an `h` only where
                // `http` follows: a letter of every other word must not end the run).
                let mut run = i + 1;
                while let Some(&c) = bytes.get(run) {
                    if matches!(c, b'`' | b'!' | b'[' | b'<' | b'*' | b'_' | b'~')
                        || (c == b'h' && bytes[run + 1..].starts_with(b"ttp"))
                    {
                        break;
                    }
                    run += 1;
                }
                out.push_str(&s[i..run]);
                i = run;
            }
        }
    }
    collapse_whitespace(&mut out);
    let end = out.trim_end_matches('\\').trim_end().len();
    out.truncate(end);
    // A link or image removed before punctuation leaves "page ." behind.
    if out.contains(" .") || out.contains(" ,") {
        out = out.replace(" .", ".").replace(" ,", ",");
    }
    out
}

/// Runs of whitespace to one space, none at either end, in place (the cleaning's one string).
pub(super) fn collapse_whitespace(s: &mut String) {
    if !s.is_ascii() {
        // Unicode spaces (U+00A0, U+3000) count too: the general path.
        *s = s.split_whitespace().collect::<Vec<_>>().join(" ");
        return;
    }
    let mut bytes = std::mem::take(s).into_bytes();
    let mut w = 0;
    let mut gap = false;
    for r in 0..bytes.len() {
        let b = bytes[r];
        if b.is_ascii_whitespace() || b == 0x0B {
            gap = w > 0;
            continue;
        }
        if gap {
            bytes[w] = b' ';
            w += 1;
            gap = false;
        }
        bytes[w] = b;
        w += 1;
    }
    bytes.truncate(w);
    // Only ASCII whitespace bytes were dropped or replaced by a space: still UTF-8 (ASCII).
    *s = String::from_utf8(bytes).unwrap_or_default();
}

/// How far a code span, a link's parts or a tag are looked for: the cleaning stays linear on
/// hostile input (a line of ten thousand `[`), and real spans are far shorter.
pub(super) const MAX_SPAN: usize = 4096;

/// `s[from..]`, at most about `max` bytes of it, cut at a character boundary.
pub(super) fn bounded(s: &str, from: usize, max: usize) -> &str {
    let mut end = (from + max).min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[from..end]
}

/// `[text](url)` or `[text][ref]` at `open`: the text and the end of the link.
pub(super) fn link_at(s: &str, open: usize) -> Option<(&str, usize)> {
    let close = open + 1 + bounded(s, open + 1, MAX_SPAN).find([']', '['])?;
    if s.as_bytes()[close] != b']' {
        return None;
    }
    let text = &s[open + 1..close];
    let after = &s[close + 1..];
    let c = if after.starts_with('(') {
        ')'
    } else if after.starts_with('[') {
        ']'
    } else {
        return None;
    };
    let end = bounded(after, 0, MAX_SPAN).find(c)?;
    Some((text, close + 1 + end + 1))
}

/// The end of an HTML tag or autolink starting at `open` (`<a href=…>`, `</li>`, `<br/>`,
/// `<https://…>`).
pub(super) fn tag_end(s: &str, open: usize) -> Option<usize> {
    let next = *s.as_bytes().get(open + 1)?;
    if !(next.is_ascii_alphabetic() || next == b'/' || next == b'!') {
        return None;
    }
    // A comparison ("a < b and c > d") is not a tag: a tag has no space right after `<`.
    let close = bounded(s, open, MAX_SPAN).find('>')?;
    Some(open + close + 1)
}

/// The comparison key: lower-case words of letters and digits, one space apart.
pub(super) fn normalise(ac: &str) -> String {
    let mut out = String::with_capacity(ac.len());
    let mut gap = false;
    for c in ac.chars() {
        if c.is_alphanumeric() {
            if gap && !out.is_empty() {
                out.push(' ');
            }
            gap = false;
            if c.is_ascii() {
                out.push(c.to_ascii_lowercase());
            } else {
                out.extend(c.to_lowercase());
            }
        } else {
            gap = true;
        }
    }
    out
}

pub(super) fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len()
        && s.is_char_boundary(prefix.len())
        && s[..prefix.len()].eq_ignore_ascii_case(prefix)
}

pub(super) fn contains_ignore_case(s: &str, needle: &str) -> bool {
    s.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}
