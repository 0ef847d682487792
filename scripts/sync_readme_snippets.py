#!/usr/bin/env python3
"""sync_readme_snippets.py: pastes each file named by a `<!-- snippet: PATH -->` marker in README.md
and README.zh.md into the fenced block right after it (tests: readme_snippets checks that they are
equal)."""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
pattern = re.compile(r"(<!-- snippet: (\S+) -->\n```[a-z]*\n)(.*?)(```)", re.S)


def paste(match):
    return match.group(1) + (root / match.group(2)).read_text(encoding="utf-8") + match.group(4)


for name in ("README.md", "README.zh.md"):
    readme = root / name
    text = readme.read_text(encoding="utf-8")
    synced, count = pattern.subn(paste, text)
    if count == 0:
        sys.exit(f"sync_readme_snippets.py: {name} has no snippet markers")
    if synced != text:
        readme.write_text(synced, encoding="utf-8")
        print(f"updated {name} ({count} snippets)")
