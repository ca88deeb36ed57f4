#!/usr/bin/env python3
"""Checks the flag tables of README.md and docs/ against each tool's -help.

Every flag a tool lists in -help must appear in its documented table, and
every flag a table names must exist (in -help, or among the hidden flags of
-help-list-hidden). A new flag without a row, or a row for a removed flag,
fails this test with the flag's name.

usage: docs_flags_test.py BIN_DIR REPO_ROOT
"""
import re
import subprocess
import sys
from pathlib import Path

# The pass-manager flags every tool shares are tabled once, in the optimizer
# docs.
PASS_FLAGS = ("docs/Optimizer.md", "## Instruments and flags")
# tool -> the (document, section heading) pairs whose tables list its flags
TABLES = {
    "model-compiler": [("README.md", "## model-compiler"), PASS_FLAGS],
    "model-runner": [("README.md", "## model-runner"), PASS_FLAGS],
    "image-classifier": [("docs/ImageClassifier.md", "## Flags"), PASS_FLAGS],
}
# LLVM's generic options, documented by -help itself.
GENERIC = {"help", "help-list", "version", "help-hidden", "help-list-hidden"}
FLAG_IN_HELP = re.compile(r"^\s+--?([a-z0-9][a-z0-9-]*)")
FLAG_IN_CELL = re.compile(r"`-{1,2}([a-z0-9][a-z0-9-]*)")


def help_flags(tool):
    out = subprocess.run([tool, "-help"], capture_output=True, text=True,
                         check=False).stdout
    return {m.group(1) for line in out.splitlines()
            if (m := FLAG_IN_HELP.match(line))} - GENERIC


def takes(tool, flag):
    """Whether \p tool knows -flag (hidden options included)."""
    run = subprocess.run([tool, "-" + flag, "-version"], capture_output=True,
                         text=True, check=False)
    return "Unknown command line argument" not in run.stderr


def section(text, heading):
    lines = text.splitlines()
    if heading not in lines:
        return None
    start = lines.index(heading) + 1
    level = heading.split(" ")[0]
    end = next((i for i in range(start, len(lines))
                if lines[i].startswith("#") and
                lines[i].split(" ")[0] <= level), len(lines))
    return lines[start:end]


def table_flags(lines):
    flags = set()
    for line in lines:
        if line.startswith("|") and not line.startswith("| ---"):
            first = re.split(r"(?<!\\)\|", line)[1]
            flags |= set(FLAG_IN_CELL.findall(first))
    return flags


def check(bin_dir, root, tool, sections):
    documented, errors = set(), []
    for doc, heading in sections:
        lines = section((root / doc).read_text(), heading)
        if lines is None:
            errors.append(f"{doc}: no section '{heading}' for {tool}")
        else:
            documented |= table_flags(lines)
    exe = str(bin_dir / tool)
    where = " or ".join(f"{d} '{h}'" for d, h in sections)
    errors += [f"{tool}: -{f} is in -help but in no table of {where}"
               for f in sorted(help_flags(exe) - documented)]
    errors += [f"{tool}: a table of {where} documents -{f}, which {tool} "
               f"does not take" for f in sorted(documented)
               if not takes(exe, f)]
    return errors


def main():
    bin_dir, root = Path(sys.argv[1]), Path(sys.argv[2])
    errors = []
    for tool, sections in TABLES.items():
        errors += check(bin_dir, root, tool, sections)
    for e in errors:
        print(e)
    print(f"{len(errors)} mismatches between -help and the flag tables")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
