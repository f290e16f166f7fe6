#!/usr/bin/env python3
"""Checks the relative links of Markdown files that the docs site does not build (the README,
the examples' READMEs): every linked file exists, and every #anchor into a Markdown file names
one of its headings. Exits 1 and names each broken link.

  scripts/check-links.py README.md Examples/ParleyDemoApp/README.md
"""
import pathlib
import re
import sys

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)
FENCED = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)


def slug(heading):
    """The anchor GitHub (and MkDocs' toc) give a heading."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return re.sub(r"\s", "-", text)


def anchors(path):
    return {slug(h) for h in HEADING.findall(FENCED.sub("", path.read_text(encoding="utf-8")))}


def main(paths):
    broken = []
    for name in paths:
        source = pathlib.Path(name)
        text = FENCED.sub("", source.read_text(encoding="utf-8"))
        for target in LINK.findall(text):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (source.parent / path).resolve() if path else source.resolve()
            if not resolved.exists():
                broken.append(f"{source}: '{target}': {path} does not exist")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                broken.append(f"{source}: '{target}': {path or source.name} has no heading #{anchor}")
    for line in broken:
        print(f"check-links: {line}", file=sys.stderr)
    if broken:
        return 1
    print(f"check-links: every link of {', '.join(paths)} resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
