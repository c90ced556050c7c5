//! Steps 2 and 3 within a block: sentences, the modal verbs and optional markers of a text, and
//! what is no criterion (placeholders, chores, hedges, pointers, obligations on users).

use super::clean::starts_with_ignore_case;

/// Splits at `.`, `!`, `?` (a run of them, with closing quotes or brackets) followed by
/// whitespace or the end, and at `。！？`; never inside inline code or after an abbreviation
/// ("e.g."). Yields (byte offset, sentence).
pub(super) fn split_sentences(buf: &str) -> Vec<(usize, &str)> {
    pub(super) const ABBREVIATIONS: &[&str] = &[
        "e.g", "i.e", "eg", "ie", "etc", "ex", "vs", "cf", "approx", "no", "nr", "fig", "mr",
        "mrs", "ms", "dr", "z.b", "d.h", "bzw", "ca", "usw", "p.ex",
    ];
    let bytes = buf.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_code = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'`' {
            in_code = !in_code;
            i += 1;
            continue;
        }
        if in_code {
            i += 1;
            continue;
        }
        let (is_end, width) = match b {
            b'.' | b'!' | b'?' => (true, 1),
            0xE3 if bytes[i..].starts_with("。".as_bytes()) => (true, 3),
            0xEF if bytes[i..].starts_with("！".as_bytes())
                || bytes[i..].starts_with("？".as_bytes()) =>
            {
                (true, 3)
            }
            _ => (false, 1),
        };
        if !is_end {
            i += 1;
            continue;
        }
        let mut end = i + width;
        let cjk = width == 3;
        while end < bytes.len() && matches!(bytes[end], b'.' | b'!' | b'?' | b'"' | b'\'' | b')') {
            end += 1;
        }
        let at_boundary = cjk || end == bytes.len() || bytes[end] == b' ';
        let abbreviation = b == b'.' && {
            // The word before the dot, looked for in the last few bytes only: an abbreviation is
            // short, and a long run without spaces must not make the split quadratic.
            let from = i.saturating_sub(8).max(start);
            let word_start = bytes[from..i]
                .iter()
                .rposition(|c| matches!(c, b' ' | b'('))
                .map_or(from, |p| from + p + 1);
            let word = &bytes[word_start..i];
            ABBREVIATIONS
                .iter()
                .any(|a| a.as_bytes().eq_ignore_ascii_case(word))
        };
        if at_boundary && !abbreviation {
            push_sentence(buf, start, end, &mut out);
            start = end;
        }
        i = end;
    }
    push_sentence(buf, start, buf.len(), &mut out);
    out
}

/// Pushes `buf[from..to]` trimmed, with the offset of its first character.
pub(super) fn push_sentence<'b>(
    buf: &'b str,
    from: usize,
    to: usize,
    out: &mut Vec<(usize, &'b str)>,
) {
    let piece = &buf[from..to];
    let lead = piece.len() - piece.trim_start().len();
    let s = piece.trim();
    if !s.is_empty() {
        out.push((from + lead, s));
    }
}

/// The modal verb that makes a prose sentence a criterion.
pub(super) struct Modal {
    pub(super) word: String,
    pub(super) required: bool,
    /// Written in RFC 2119 capitals.
    pub(super) rfc: bool,
}

/// Modal verbs and phrases that make a sentence a requirement, as lower-case words.
pub(super) const REQUIRED_MODALS: &[&[&str]] = &[
    &["must"],
    &["shall"],
    &["is", "required", "to"],
    &["are", "required", "to"],
    &["muss"],
    &["müssen"],
    &["darf", "nicht"],
    &["dürfen", "nicht"],
    &["doit"],
    &["doivent"],
    &["devra"],
    &["devront"],
    &["debe"],
    &["deben"],
    &["deberá"],
    &["deberán"],
    &["tiene", "que"],
    &["tienen", "que"],
    &["deve"],
    &["devem"],
    &["deverá"],
    &["deverão"],
    &["precisa"],
    &["precisam"],
];
/// Those that make it a wish.
pub(super) const OPTIONAL_MODALS: &[&[&str]] = &[
    &["should"],
    &["ought", "to"],
    &["sollte"],
    &["sollten"],
    &["devrait"],
    &["devraient"],
    &["debería"],
    &["deberían"],
    &["sería", "bueno"],
    &["deveria"],
    &["deveriam"],
    &["seria", "bom"],
];
/// Scripts without spaces between words: looked for as substrings.
pub(super) const REQUIRED_MODALS_CJK: &[&str] = &[
    "必须",
    "必須",
    "务必",
    "須要",
    "なければならない",
    "必要がある",
    "必要があります",
];
pub(super) const OPTIONAL_MODALS_CJK: &[&str] = &["应该", "應該", "べき"];

/// Words explicitly marking a criterion optional.
pub(super) const OPTIONAL_MARKERS: &[&[&str]] = &[
    &["optional"],
    &["optionally"],
    &["nice", "to", "have"],
    &["optionnel"],
    &["opcional"],
    &["wünschenswert"],
];
pub(super) const OPTIONAL_MARKERS_CJK: &[&str] = &["可选", "任意"];
/// Verbs that make a list item (not a checklist item) optional.
pub(super) const OPTIONAL_VERBS: &[&[&str]] = &[
    &["should"],
    &["could"],
    &["sollte"],
    &["sollten"],
    &["devrait"],
    &["debería"],
    &["deveria"],
];

/// The words of a text: maximal runs of letters and digits, without allocating. A word scan
/// instead of a regex with `\b`: Unicode word boundaries send the regex engines to their
/// slowest path, and this runs on every paragraph.
#[derive(Clone)]
pub(super) struct Words<'a> {
    pub(super) s: &'a str,
    pub(super) at: usize,
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.s.as_bytes();
        let mut i = self.at;
        // Skip to the word's start: ASCII separators a byte at a time.
        let start = loop {
            let Some(&b) = bytes.get(i) else {
                self.at = i;
                return None;
            };
            if b < 0x80 {
                if b.is_ascii_alphanumeric() {
                    break i;
                }
                i += 1;
            } else {
                let c = self.s[i..].chars().next().unwrap_or(' ');
                if c.is_alphanumeric() {
                    break i;
                }
                i += c.len_utf8();
            }
        };
        // And to its end.
        while let Some(&b) = bytes.get(i) {
            if b < 0x80 {
                if !b.is_ascii_alphanumeric() {
                    break;
                }
                i += 1;
            } else {
                let c = self.s[i..].chars().next().unwrap_or(' ');
                if !c.is_alphanumeric() {
                    break;
                }
                i += c.len_utf8();
            }
        }
        self.at = i;
        Some(&self.s[start..i])
    }
}

pub(super) fn words(s: &str) -> Words<'_> {
    Words { s, at: 0 }
}

/// Which first words a phrase of `phrases` may start with: per first byte (ASCII case folded),
/// a bit for each byte length of such a word (16 and longer share the last bit), so that most
/// words are passed over with one lookup.
pub(super) type FirstWords = [u16; 256];

pub(super) const fn first_words(phrases: &[&[&str]]) -> FirstWords {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < phrases.len() {
        let word = phrases[i][0].as_bytes();
        let bit = 1u16 << if word.len() < 15 { word.len() } else { 15 };
        table[word[0].to_ascii_lowercase() as usize] |= bit;
        table[word[0].to_ascii_uppercase() as usize] |= bit;
        i += 1;
    }
    table
}

/// Whether `w` may start a phrase of the table's.
pub(super) fn may_start(first: &FirstWords, w: &str) -> bool {
    first[usize::from(w.as_bytes()[0])] & (1u16 << w.len().min(15)) != 0
}

/// The phrase of `phrases` that starts with the word `w`, the words after it in `ahead`: the
/// word as written for a one-word phrase, else the phrase's words.
pub(super) fn phrase_at(w: &str, ahead: &Words<'_>, phrases: &[&[&str]]) -> Option<String> {
    for p in phrases {
        if !p[0].eq_ignore_ascii_case(w) {
            continue;
        }
        let mut ahead = ahead.clone();
        if p[1..]
            .iter()
            .all(|part| ahead.next().is_some_and(|n| part.eq_ignore_ascii_case(n)))
        {
            return Some(if p.len() == 1 {
                w.to_string()
            } else {
                p.join(" ")
            });
        }
    }
    None
}

/// What one word scan of a text finds: its modal verb, and the words that would make it optional.
pub(super) struct Signals {
    pub(super) modal: Option<Modal>,
    /// "optional", "nice to have" (see [`OPTIONAL_MARKERS`]).
    pub(super) marker: bool,
    /// "should", "could" (see [`OPTIONAL_VERBS`]).
    pub(super) optional_verb: bool,
}

impl Signals {
    /// Words in an item's text that make it optional. A checklist item is required whatever its
    /// verb (the rule), so only the explicit words count there; a list item's `should`
    /// or `could` counts too.
    pub(super) fn marks_optional(&self, modal_verbs: bool) -> bool {
        self.marker
            || (modal_verbs
                && self.optional_verb
                && self.modal.as_ref().is_none_or(|m| !m.required))
    }
}

pub(super) fn signals(s: &str) -> Signals {
    scan_words(s, true)
}

pub(super) fn modal(plain: &str) -> Option<Modal> {
    scan_words(plain, false).modal
}

/// One scan of the words of `s` for every list (most prose has none of them); `markers`: whether
/// to look for the optional markers and verbs too, else the scan ends at the first required
/// modal. A required phrase anywhere wins over a wish before it.
pub(super) fn scan_words(s: &str, markers: bool) -> Signals {
    pub(super) const REQUIRED_FIRST: FirstWords = first_words(REQUIRED_MODALS);
    pub(super) const OPTIONAL_FIRST: FirstWords = first_words(OPTIONAL_MODALS);
    pub(super) const MARKERS_FIRST: FirstWords = first_words(OPTIONAL_MARKERS);
    pub(super) const VERBS_FIRST: FirstWords = first_words(OPTIONAL_VERBS);
    let of_word = |w: String, required: bool| Modal {
        rfc: w.len() > 1 && w.chars().all(|c| !c.is_lowercase()),
        word: w.to_lowercase(),
        required,
    };
    let of_cjk = |cjk: &[&str], required: bool| {
        cjk.iter().find(|m| s.contains(**m)).map(|m| Modal {
            word: (*m).to_string(),
            required,
            rfc: false,
        })
    };
    let (mut must, mut wish) = (None, None);
    let (mut marker, mut optional_verb) = (false, false);
    let mut ws = words(s);
    // Words since the last "that": a `should` a few words after it sits in a that-clause
    // ("documentation suggesting that a node should be rebooted"), what the item talks about.
    let mut since_that = usize::MAX;
    while let Some(w) = ws.next() {
        since_that = if w.eq_ignore_ascii_case("that") {
            0
        } else {
            since_that.saturating_add(1)
        };
        if must.is_none() && may_start(&REQUIRED_FIRST, w) {
            must = phrase_at(w, &ws, REQUIRED_MODALS);
            if must.is_some() && !markers {
                break;
            }
        }
        if wish.is_none() && may_start(&OPTIONAL_FIRST, w) {
            wish = phrase_at(w, &ws, OPTIONAL_MODALS);
        }
        if markers {
            marker = marker
                || (may_start(&MARKERS_FIRST, w) && phrase_at(w, &ws, OPTIONAL_MARKERS).is_some());
            optional_verb = optional_verb
                || (since_that > 3
                    && may_start(&VERBS_FIRST, w)
                    && phrase_at(w, &ws, OPTIONAL_VERBS).is_some());
        }
    }
    let ascii = s.is_ascii();
    let modal = match must {
        Some(p) => Some(of_word(p, true)),
        None if ascii => wish.map(|w| of_word(w, false)),
        None => of_cjk(REQUIRED_MODALS_CJK, true)
            .or_else(|| wish.map(|w| of_word(w, false)))
            .or_else(|| of_cjk(OPTIONAL_MODALS_CJK, false)),
    };
    Signals {
        modal,
        marker: marker || (!ascii && OPTIONAL_MARKERS_CJK.iter().any(|m| s.contains(m))),
        optional_verb,
    }
}

/// A sentence that hedges is a guess about the change, not a criterion of it.
pub(super) fn is_hedged(lower: &str) -> bool {
    pub(super) const HEDGES: &[&str] = &[
        "i think",
        "i guess",
        "i believe",
        "probably",
        "hopefully",
        "maybe",
        "perhaps",
        "afaik",
        "should be fine",
        "should be ok",
        "should be good",
    ];
    HEDGES.iter().any(|h| lower.contains(h))
}

/// "See #12, …", "See [the design](…)": a sentence that sends the reader elsewhere.
pub(super) fn is_pointer(lower: &str) -> bool {
    ["see ", "refer to ", "siehe ", "voir ", "ver ", "véase "]
        .iter()
        .any(|p| lower.starts_with(p))
}

/// "… if the following conditions fail:", "… when any of the following occurs:": the list after
/// the sentence names the conditions of its requirement, not requirements of their own.
pub(super) fn introduces_conditions(plain: &str) -> bool {
    pub(super) const CONDITIONS: &[&str] = &["if", "when", "whenever", "unless", "where"];
    pub(super) const QUANTIFIERS: &[&str] = &["any", "one", "all", "each", "either", "none"];
    let lower = plain.to_lowercase();
    let Some(at) = lower.find("the following") else {
        return false;
    };
    let mut before = lower[..at].split_whitespace().rev();
    let is = |w: Option<&str>, set: &[&str]| w.is_some_and(|w| set.contains(&w));
    let w1 = before.next();
    if is(w1, CONDITIONS) {
        return true;
    }
    w1 == Some("of") && is(before.next(), QUANTIFIERS) && is(before.next(), CONDITIONS)
}

/// "Users must install …", "you must be logged in", "Authors and users of … must live with
/// it": the modal binds the people using the result, not the change. "Users must be able to …"
/// (or "not be able to") states what the change gives them, so it stays a criterion.
pub(super) fn is_user_obligation(plain: &str) -> bool {
    pub(super) const PEOPLE: &[&str] = &["users", "user", "you", "authors"];
    let is_person = |w: &str| PEOPLE.iter().any(|p| p.eq_ignore_ascii_case(w));
    let mut ws = words(plain);
    let opener = ws.clone().next().is_some_and(is_person);
    let mut prev = "";
    while let Some(w) = ws.next() {
        if ["must", "should", "shall"]
            .iter()
            .any(|m| m.eq_ignore_ascii_case(w))
        {
            let mut ahead = ws.clone();
            let next = ahead.next().unwrap_or("");
            let (a, b) = if next.eq_ignore_ascii_case("not") {
                (ahead.next().unwrap_or(""), ahead.next().unwrap_or(""))
            } else {
                (next, ahead.next().unwrap_or(""))
            };
            let able = a.eq_ignore_ascii_case("be") && b.eq_ignore_ascii_case("able");
            return (opener || is_person(prev)) && !able;
        }
        prev = w;
    }
    false
}

/// "This section should explain …": a template's instruction about its own sections, for
/// whoever fills it in.
pub(super) fn is_section_guidance(lower: &str) -> bool {
    lower.contains("this section") || lower.contains("the section")
}

/// A paragraph that is one bracketed prompt (`[A description of the steps …\n… cycle](…).]`):
/// its first `[` closes at its last character.
pub(super) fn is_bracketed(buf: &str) -> bool {
    let t = buf.trim();
    if !t.starts_with('[') || !t.ends_with(']') {
        return false;
    }
    let mut depth = 0usize;
    for (i, b) in t.bytes().enumerate() {
        match b {
            b'[' => depth += 1,
            b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1 == t.len();
                }
            }
            _ => {}
        }
    }
    false
}

/// `v1.xx`, `1.XX`: a version left for the author to fill in.
pub(super) fn is_version_placeholder(word: &str) -> bool {
    let w = word.trim_matches(|c: char| !c.is_alphanumeric());
    let w = w.strip_prefix(['v', 'V']).unwrap_or(w);
    let Some((major, minor)) = w.split_once('.') else {
        return false;
    };
    !major.is_empty()
        && major.bytes().all(|b| b.is_ascii_digit())
        && minor.len() >= 2
        && minor.bytes().all(|b| b == b'x' || b == b'X')
}

/// The RFC 2119 / BCP 14 key-words paragraph names the modals without requiring anything.
pub(super) fn is_rfc2119_boilerplate(lower: &str) -> bool {
    lower.contains("rfc 2119") || lower.contains("rfc2119") || lower.contains("bcp 14")
}

/// Prompts a template leaves for the author, and the fillers put in their place.
pub(crate) fn is_placeholder(ac: &str) -> bool {
    pub(super) const FILLERS: &[&str] = &[
        "n/a", "na", "tbd", "tba", "todo", "none", "-", "...", "…", "?", "wip", "nothing",
    ];
    pub(super) const PROMPTS: &[&str] = &[
        "describe ",
        "explain ",
        "please ",
        "if applicable",
        "add any ",
        "replace this",
        "list the ",
        "list what ",
        "list any ",
        "link to the issue",
        "your ",
        "write your ",
        "a clear and concise description",
        "a description of ",
        "a short description",
        "a brief description",
    ];
    let t = ac.trim().trim_end_matches('.');
    FILLERS.iter().any(|f| f.eq_ignore_ascii_case(t))
        || PROMPTS.iter().any(|p| starts_with_ignore_case(t, p))
        || ((t.contains(".x") || t.contains(".X"))
            && t.split_whitespace().any(is_version_placeholder))
}

/// Checklist items of pull request templates that are process chores, not behaviour: the author
/// vouching for themselves ("I have read…", "My code follows…"), and a short list of
/// housekeeping items. Deliberately small: a behaviour that mentions tests or docs ("the runbook
/// lists the restart steps") is not a chore.
pub(crate) fn is_chore(ac: &str) -> bool {
    pub(super) const FIRST_PERSON: &[&str] = &[
        "i have ",
        "i've ",
        "i agree",
        "i confirm",
        "i read ",
        "i ran ",
        "i tested",
        "my code ",
        "my changes ",
        "my change ",
    ];
    pub(super) const HOUSEKEEPING: &[&str] = &[
        "tests added",
        "tests updated",
        "tests pass",
        "added tests",
        "added unit tests",
        "unit tests added",
        "docs updated",
        "documentation updated",
        "updated docs",
        "updated the docs",
        "updated documentation",
        "updated the documentation",
        "changelog",
        "updated changelog",
        "updated the changelog",
        "linked the issue",
        "linked issue",
        "signed the cla",
        "cla signed",
        "self-review",
        "self review",
        "rebased",
        "squashed",
        "ci passes",
        "ci is green",
        "lint passes",
        "labels added",
        "added labels",
    ];
    let t = ac.trim();
    FIRST_PERSON.iter().any(|p| starts_with_ignore_case(t, p))
        || HOUSEKEEPING.iter().any(|h| {
            starts_with_ignore_case(t, h)
                && t[h.len()..]
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_alphanumeric())
        })
}
