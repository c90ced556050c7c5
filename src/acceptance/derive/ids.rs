//! Step 6, the criteria's stable ids.

use std::collections::HashSet;
use std::hash::BuildHasherDefault;

use sha2::{Digest, Sha256};

use super::merge::{Fx, Map};
use super::scan::Candidate;

pub(super) const MAX_ID: usize = 48;

pub(super) fn assign_ids(kept: &[Candidate]) -> Vec<String> {
    let slugs: Vec<String> = kept.iter().map(|c| slug(&c.key)).collect();
    let mut count: Map<&str, usize> = Map::default();
    for s in &slugs {
        *count.entry(s.as_str()).or_default() += 1;
    }
    let mut taken: HashSet<String, BuildHasherDefault<Fx>> = HashSet::default();
    let mut out = Vec::with_capacity(kept.len());
    for (c, s) in kept.iter().zip(&slugs) {
        // `guard` would report as `stage1.floor.guard`, the regression guard's own id.
        let collides = count[s.as_str()] > 1 || s == "guard";
        // The key's hash only for a slug that collides (hashing is most of the ids' cost).
        let mut hash = None;
        let mut short_hash =
            || -> String { hash.get_or_insert_with(|| hash_hex(&c.key))[..4].to_string() };
        let mut id = if collides {
            with_suffix(s, &short_hash())
        } else {
            s.clone()
        };
        let mut n = 2;
        while !taken.insert(id.clone()) {
            id = with_suffix(s, &format!("{}-{n}", short_hash()));
            n += 1;
        }
        out.push(id);
    }
    out
}

pub(super) fn with_suffix(slug: &str, suffix: &str) -> String {
    let room = MAX_ID - suffix.len() - 1;
    let mut base = truncate_words(slug, room);
    base.push('-');
    base.push_str(suffix);
    base
}

pub(super) fn truncate_words(slug: &str, max: usize) -> String {
    if slug.len() <= max {
        return slug.to_string();
    }
    let cut = slug[..=max].rfind('-').filter(|&p| p > 0).unwrap_or(max);
    slug[..cut].trim_end_matches('-').to_string()
}

pub(super) fn hash_hex(key: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"claim-check/derive/v1\0");
    h.update(key.as_bytes());
    hex::encode(h.finalize())
}

/// `[a-z0-9][a-z0-9-]*` from the key's words, accents folded, at most [`MAX_ID`] characters; a
/// key mostly outside ASCII (Japanese, Chinese) is `ac-` and 8 hex digits of its hash.
pub(super) fn slug(key: &str) -> String {
    let mut out = String::new();
    let (mut total, mut ascii) = (0usize, 0usize);
    let mut w = String::new();
    for word in key.split(' ') {
        // A key's words are letters and digits (see [`normalise`]): an ASCII one is its slug.
        if word.is_ascii() && !word.is_empty() {
            total += word.len();
            ascii += word.len();
            if !out.is_empty() {
                out.push('-');
            }
            out.push_str(word);
            if out.len() > MAX_ID {
                break;
            }
            continue;
        }
        w.clear();
        for c in word.chars() {
            total += 1;
            if c.is_ascii_alphanumeric() {
                w.push(c);
                ascii += 1;
            } else if let Some(f) = fold_accent(c) {
                w.push_str(f);
                ascii += 1;
            } else if !w.is_empty() && !w.ends_with('-') {
                w.push('-');
            }
        }
        let trimmed = w.trim_matches('-');
        if trimmed.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(trimmed);
        if out.len() > MAX_ID {
            break;
        }
    }
    if out.is_empty() || ascii * 10 < total * 6 {
        return format!("ac-{}", &hash_hex(key)[..8]);
    }
    truncate_words(&out, MAX_ID)
}

pub(super) fn fold_accent(c: char) -> Option<&'static str> {
    Some(match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' => "a",
        'ç' => "c",
        'è' | 'é' | 'ê' | 'ë' => "e",
        'ì' | 'í' | 'î' | 'ï' => "i",
        'ñ' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' => "o",
        'ù' | 'ú' | 'û' | 'ü' => "u",
        'ý' | 'ÿ' => "y",
        'ß' => "ss",
        'æ' => "ae",
        'œ' => "oe",
        _ => return None,
    })
}
