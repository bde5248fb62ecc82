#!/usr/bin/env python3
"""tools/check-doc-links.py passes on the tree and reports each kind of broken reference in a
small tree written here (a missing file, a missing anchor, a missing doc, a missing section),
while the good references beside them pass."""
import pathlib
import subprocess
import sys
import tempfile

root = pathlib.Path(sys.argv[1]).resolve()
checker = root / "tools" / "check-doc-links.py"


def run(tree: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(checker), "--root", str(tree)], capture_output=True, text=True)


clean = run(root)
print(clean.stdout + clean.stderr, end="")
if clean.returncode != 0:
    sys.exit("FAIL: the tree has broken doc references")

with tempfile.TemporaryDirectory() as tmp:
    tree = pathlib.Path(tmp)
    (tree / "docs").mkdir()
    (tree / "src").mkdir()
    (tree / "docs" / "b.md").write_text("# B\n\n## The ivshmem transport (a QEMU guest)\n\n```\n# not a heading\n```\n")
    (tree / "docs" / "a.md").write_text(
        "# A\n"
        "[good](b.md#the-ivshmem-transport-a-qemu-guest) [good too](#a) [web](https://example.org/x)\n"
        "[no file](c.md)\n"
        "[no anchor](b.md#not-a-heading)\n")
    (tree / "src" / "x.cc").write_text(
        '// docs/b.md "The ivshmem transport" is fine\n'
        "// docs/gone.md is not\n"
        '// docs/b.md, "Removal with clients open" is not\n'
        "// wrapped: docs/b.md,\n"
        '// "No such section" is not either\n')
    dirty = run(tree)
    print(dirty.stdout, end="")
    expected = ["docs/a.md:3: link to c.md: no such file",
                "docs/a.md:4: link to b.md#not-a-heading: no heading with anchor #not-a-heading",
                "src/x.cc:2: docs/gone.md: no such doc",
                'src/x.cc:3: docs/b.md "Removal with clients open": no such section',
                'src/x.cc:4: docs/b.md "No such section": no such section']
    if dirty.returncode != 1 or sorted(dirty.stdout.splitlines()) != sorted(expected):
        sys.exit(f"FAIL: expected exactly {expected}")
print("check_doc_links_test: the tree passes; each kind of broken reference is reported, good ones are not")
