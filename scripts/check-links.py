#!/usr/bin/env python3
"""Checks that every relative link and image in the project's Markdown resolves.

Scanned: README.md, SECURITY.md and docs/src/**/*.md. For each inline link or image
(`[text](target)`, `![alt](target)`), reference definition (`[name]: target`) and HTML
`href="…"`/`src="…"` outside code, a relative target must name an existing file or directory
(relative to the file it is in); a `#anchor`, alone or after a Markdown file, must name a heading
of that file as GitHub and mdBook slug it: the heading's text lowercased, each space a `-`, every
character but letters, digits, `-` and `_` dropped, and `-1`, `-2`, … after repeats. Links to
this repository's own files on GitHub (`https://github.com/shipmoor/claim-check/blob/main/PATH`,
which the book uses for files outside it) are checked as PATH from the repository's root. Other
URLs (`https:`, `mailto:`) are not fetched.

Usage: python3 scripts/check-links.py   (from anywhere; exit 0 when every link resolves, else 1
with one `file:line: …` line per broken link). Python's standard library only.
"""

import re
import sys
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPO_URLS = (
    "https://github.com/shipmoor/claim-check/blob/main/",
    "https://github.com/shipmoor/claim-check/tree/main/",
)

FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
INLINE = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\n(?!\n)|\[[^\[\]]*\])*)\]\(\s*(<[^>\n]*>|[^\s()]+(?:\([^\s()]*\)[^\s()]*)*)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"
)
REFERENCE = re.compile(r"^ {0,3}\[[^\]\n]+\]:[ \t]*(<[^>\n]*>|\S+)", re.M)
HTML = re.compile(r"\b(?:href|src)\s*=\s*[\"']([^\"']*)[\"']")
HTML_ANCHOR = re.compile(r"<a\b[^>]*\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def strip_fences(text):
    """The text with every line of a fenced code block emptied (line numbers kept)."""
    out = []
    fence = None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                line = ""
        else:
            closing = m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)
            if closing and not line.strip()[len(m.group(1)):].strip():
                fence = None
            line = ""
        out.append(line)
    return "\n".join(out)


def blank_code(text):
    """The text with fenced code blocks and code spans blanked (newlines kept), so that no link
    is read from code."""
    # Code spans: a run of n backticks up to the next run of exactly n, within one paragraph.
    blocks = re.split(r"(\n[ \t]*\n)", strip_fences(text))
    return "".join(blank_spans(b) for b in blocks)


def blank_spans(block):
    chars = list(block)
    i = 0
    while i < len(block):
        if block[i] != "`":
            i += 1
            continue
        j = i
        while j < len(block) and block[j] == "`":
            j += 1
        n = j - i
        close = re.compile(r"(?<!`)`{%d}(?!`)" % n).search(block, j)
        if close is None:
            i = j
            continue
        for k in range(i, close.end()):
            if chars[k] != "\n":
                chars[k] = " "
        i = close.end()
    return "".join(chars)


def plain_heading(text):
    """A heading's text as it reads: links and images reduced to their text, HTML tags gone."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"<[^>]+>", "", text)


def slug(text):
    out = []
    for ch in plain_heading(text).strip().lower():
        if ch.isalnum() or ch in "-_":
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)


_anchors = {}


def anchors(path):
    """Every anchor a Markdown file defines: its headings' slugs (repeats numbered as GitHub
    and mdBook number them) and explicit `<a id=…>`/`<a name=…>`."""
    if path not in _anchors:
        raw = path.read_text(encoding="utf-8")
        found = set(HTML_ANCHOR.findall(raw))
        seen = {}
        # Fences removed (a `# comment` in a shell block is no heading); a heading's code spans
        # stay, as their text is part of its anchor.
        for line in strip_fences(raw).split("\n"):
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        _anchors[path] = found
    return _anchors[path]


def check_target(source, target):
    """None when `target` (as written in `source`) resolves, else why not."""
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1]
    base = source.parent
    for prefix in REPO_URLS:
        if target.startswith(prefix):
            target = target[len(prefix):]
            base = ROOT
            break
    else:
        if SCHEME.match(target) or target.startswith("//"):
            return None
    path_part, _, anchor = target.partition("#")
    path_part = urllib.parse.unquote(path_part.split("?", 1)[0])
    if path_part.startswith("/"):
        base, path_part = ROOT, path_part.lstrip("/")
    dest = (base / path_part).resolve() if path_part else source
    if not dest.exists():
        return f"{display(dest)} does not exist"
    try:
        dest.relative_to(ROOT)
    except ValueError:
        return f"{dest} is outside the repository"
    if anchor:
        if dest.is_dir() or dest.suffix != ".md":
            return f"an anchor into {display(dest)}, which is not a Markdown file"
        if urllib.parse.unquote(anchor) not in anchors(dest):
            return f"{display(dest)} has no heading whose anchor is #{anchor}"
    return None


def display(path):
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def links(text):
    """(line, target) for every link, image, reference definition and HTML href/src."""
    clean = blank_code(text)
    found = []
    for m in INLINE.finditer(clean):
        found.append((m.start(3), m.group(3)))
    for m in REFERENCE.finditer(clean):
        found.append((m.start(1), m.group(1)))
    for m in HTML.finditer(clean):
        found.append((m.start(1), m.group(1)))
    return sorted((clean.count("\n", 0, at) + 1, target) for at, target in found)


def main():
    files = [ROOT / "README.md", ROOT / "SECURITY.md"]
    files += sorted((ROOT / "docs" / "src").rglob("*.md"))
    broken = []
    count = 0
    for path in files:
        if not path.exists():
            broken.append(f"{display(path)}: the file to check does not exist")
            continue
        for line, target in links(path.read_text(encoding="utf-8")):
            count += 1
            why = check_target(path, target)
            if why:
                broken.append(f"{display(path)}:{line}: broken link `{target}`: {why}")
    for b in broken:
        print(b)
    if broken:
        print(f"check-links: {len(broken)} broken of {count} links in {len(files)} files")
        return 1
    print(f"check-links: {count} links in {len(files)} files, all resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
