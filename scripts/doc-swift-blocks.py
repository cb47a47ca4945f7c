#!/usr/bin/env python3
"""Writes every Swift code block of the MapKit documentation to a file of its own, for a compiler to check.

The blocks are those of README.md's iOS quick start, of the MapKit and SwiftUI guide
(Sources/MapClusterMapKit/Documentation.docc/MapKitAndSwiftUI.md) and of the migration guide
(Sources/MapClusterManager/Documentation.docc/ComingFromIOSLibraries.md): each block that imports a module, which is
a whole file (its imports, its types); a block without an import (a line of a Package.swift) is not one.
Usage: doc-swift-blocks.py OUTDIR. Prints one line per block, "SOURCE:LINE FILE PLATFORMS" (ios, or ios and macos for a
block that imports neither UIKit nor AppKit), and exits 1 if a source has no block, so that a renamed heading can't
silently skip them. scripts/check-mapkit.sh (Linux, against the SDK mirror) and
scripts/build-examples-apple.sh (macOS, against Apple's SDKs) compile what it writes.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = [
    ("README.md", "## Quick start: an iOS app"),
    ("Sources/MapClusterMapKit/Documentation.docc/MapKitAndSwiftUI.md", None),
    ("Sources/MapClusterManager/Documentation.docc/ComingFromIOSLibraries.md", None),
]


def blocks(path: str, section: str | None) -> list[tuple[int, str]]:
    lines = (ROOT / path).read_text().split("\n")
    inside_section = section is None
    found, current, start = [], None, 0
    for number, line in enumerate(lines, start=1):
        if section is not None and line.startswith("## "):
            inside_section = line.strip() == section
        if current is None:
            if inside_section and line.strip() == "```swift":
                current, start = [], number + 1
        elif line.strip() == "```":
            if any(code_line.startswith("import ") for code_line in current):
                found.append((start, "\n".join(current) + "\n"))
            current = None
        else:
            current.append(line)
    return found


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for path, section in SOURCES:
        found = blocks(path, section)
        if not found:
            print(f"{path}: no Swift block{f' under {section!r}' if section else ''}", file=sys.stderr)
            return 1
        stem = re.sub(r"\W", "", pathlib.Path(path).stem)
        for line, code in found:
            name = f"{stem}_L{line}"
            (out / f"{name}.swift").write_text(code)
            uikit = re.search(r"^import (UIKit|AppKit)$", code, re.M)
            platforms = "ios" if uikit else "ios macos"
            print(f"{path}:{line} {name}.swift {platforms}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
