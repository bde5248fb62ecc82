#!/usr/bin/env python3
"""Checks that the documentation's cross-references resolve.

1. Every relative Markdown link `[text](path#anchor)` in a tracked `*.md` file names a file or
   directory that exists, and its anchor (if any) is the GitHub slug of a heading of that file.
2. Every reference of the form `docs/NAME.md` in a tracked text file (sources, scripts, docs)
   names an existing doc, and a section named after it in quotes (`docs/NAME.md, "Section"` or
   `docs/NAME.md "Section"`, also wrapped onto the next comment line) is part of one of that doc's
   headings (case-insensitive).

Prints each broken reference as `file:line: ...` and exits 1 when there is one.
"""
import argparse
import pathlib
import re
import subprocess
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
DOC_REF = re.compile(r'docs/([A-Za-z0-9_.-]+\.md)(?:,?\s+"([^"]+)")?')
WRAPPED = re.compile(r"docs/[A-Za-z0-9_.-]+\.md,?\s*$")
COMMENT = re.compile(r"^\s*(?://+|#+|\*+|--)?\s*")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# The checker and its test write about references rather than make them.
SELF = {"tools/check-doc-links.py", "tests/tools/check_doc_links_test.py"}
TEXT_SUFFIXES = {".md", ".c", ".cc", ".cpp", ".h", ".hpp", ".py", ".sh", ".txt", ".sv", ".svh", ".v",
                 ".json", ".yaml", ".yml", ".cmake", ".dts", ".dtsi", ".dtso", ".tcl", ".xdc", ""}


def headings(path: pathlib.Path) -> list[str]:
    result, fenced = [], False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match:
            result.append(match.group(2))
    return result


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: pathlib.Path) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for heading in headings(path):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def tracked(root: pathlib.Path) -> list[pathlib.Path]:
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True).stdout
        names = out.splitlines()
    except (OSError, subprocess.CalledProcessError):
        names = [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "build" not in p.parts]
    return [root / n for n in names if (root / n).is_file()]


def check(root: pathlib.Path) -> list[str]:
    errors = []
    anchor_cache: dict[pathlib.Path, set[str]] = {}
    heading_cache: dict[pathlib.Path, list[str]] = {}
    for path in tracked(root):
        if (path.suffix not in TEXT_SUFFIXES or path.stat().st_size > 2_000_000
                or path.relative_to(root).as_posix() in SELF):
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        rel = path.relative_to(root)
        lines = text.splitlines()
        for number, line in enumerate(lines, 1):
            if path.suffix == ".md":
                for target in LINK.findall(line):
                    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
                        continue  # http:, https:, mailto:
                    file_part, _, anchor = target.partition("#")
                    dest = (path.parent / file_part).resolve() if file_part else path
                    if not dest.exists():
                        errors.append(f"{rel}:{number}: link to {target}: no such file")
                        continue
                    if anchor and dest.is_file() and dest.suffix == ".md":
                        if dest not in anchor_cache:
                            anchor_cache[dest] = anchors(dest)
                        if anchor not in anchor_cache[dest]:
                            errors.append(f"{rel}:{number}: link to {target}: no heading with anchor #{anchor}")
            if WRAPPED.search(line) and number < len(lines):
                # A reference wrapped after the doc's name: the section opens the next line.
                line = line + " " + COMMENT.sub("", lines[number])
            for name, section in DOC_REF.findall(line):
                doc = root / "docs" / name
                if not doc.is_file():
                    errors.append(f"{rel}:{number}: docs/{name}: no such doc")
                    continue
                if section:
                    if doc not in heading_cache:
                        heading_cache[doc] = [h.lower() for h in headings(doc)]
                    wanted = section.lower().rstrip(".")
                    if not any(wanted in h for h in heading_cache[doc]):
                        errors.append(f'{rel}:{number}: docs/{name} "{section}": no such section')
    return errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    errors = check(args.root.resolve())
    for error in errors:
        print(error)
    print(f"check-doc-links: {len(errors)} broken reference(s)", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
