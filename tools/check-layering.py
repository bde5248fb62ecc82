#!/usr/bin/env python3
"""Checks every #include of the project's layers against docs/architecture.md's allowed arrows.

The table under "## Allowed includes" in docs/architecture.md names, for each layer directory,
the layers whose public headers (`<dir>/include/sable/...`, and the generated `sable/isa*.h` of
rtl/) it may include. A header is attributed to the layer whose include directory holds it
(the longest matching layer directory wins, so `hal/npu` is a layer of its own above `hal`).
Prints each forbidden include as `file:line: <layer> includes <header> of <layer>` and exits 1
when there is one; `--print` shows the arrows in use instead.
"""
import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](sable/[^>"]+)[>"]')
SOURCE_SUFFIXES = {".c", ".cc", ".cpp", ".h", ".hpp"}
# Headers the build generates rather than a layer's include directory holding them.
GENERATED = {re.compile(r"^sable/isa[a-z_]*\.h$"): "rtl"}


def read_table(doc: pathlib.Path) -> dict[str, set[str]]:
    text = doc.read_text()
    match = re.search(r"^## Allowed includes\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    if not match:
        sys.exit(f"check-layering: {doc} has no '## Allowed includes' section")
    allowed: dict[str, set[str]] = {}
    for line in match.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not cells[0].startswith("`"):
            continue
        layer = cells[0].strip("`")
        targets = set(re.findall(r"`([^`]+)`", cells[1]))
        allowed[layer] = targets
    if not allowed:
        sys.exit(f"check-layering: the '## Allowed includes' table of {doc} is empty")
    return allowed


def layer_of(path: str, layers: list[str]) -> str | None:
    best = None
    for layer in layers:
        if path == layer or path.startswith(layer + "/"):
            if best is None or len(layer) > len(best):
                best = layer
    return best


def header_index(root: pathlib.Path, layers: list[str]) -> dict[str, str]:
    """Maps 'sable/...' include paths to the layer whose include directory holds them."""
    index: dict[str, str] = {}
    for include_dir in root.glob("**/include"):
        rel = include_dir.relative_to(root).as_posix()
        if rel.startswith(("build", ".")) or "/build" in rel:
            continue
        owner = layer_of(rel, layers)
        if owner is None:
            continue
        for header in include_dir.rglob("*"):
            if header.is_file():
                index[header.relative_to(include_dir).as_posix()] = owner
    return index


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parents[1])
    parser.add_argument("--doc", type=pathlib.Path, help="default: ROOT/docs/architecture.md")
    parser.add_argument("--print", action="store_true", help="print the arrows in use")
    args = parser.parse_args()
    root = args.root.resolve()
    allowed = read_table(args.doc or root / "docs" / "architecture.md")
    layers = sorted(allowed)
    index = header_index(root, layers)
    used: dict[tuple[str, str], int] = {}
    violations = []
    checked = 0
    for layer in layers:
        for source in sorted((root / layer).rglob("*")):
            if source.suffix not in SOURCE_SUFFIXES or not source.is_file():
                continue
            rel = source.relative_to(root).as_posix()
            if layer_of(rel, layers) != layer or "/build" in rel:
                continue  # a deeper layer's file (hal/npu inside hal) is checked as that layer's
            checked += 1
            for number, line in enumerate(source.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                header = m.group(1)
                owner = index.get(header) or next((l for p, l in GENERATED.items() if p.match(header)), None)
                if owner is None or owner == layer:
                    continue
                used[(layer, owner)] = used.get((layer, owner), 0) + 1
                if owner not in allowed[layer]:
                    violations.append(f"{rel}:{number}: {layer} includes {header} of {owner}")
    if args.print:
        for (a, b), n in sorted(used.items()):
            print(f"{a} -> {b} ({n})")
    for v in violations:
        print(v)
    print(f"check-layering: {checked} files of {len(layers)} layers, {len(violations)} forbidden includes")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
