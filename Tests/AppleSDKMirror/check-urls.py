"""Checks that every public declaration of the SDK mirror carries the URL of its Apple documentation page.

A declaration's comment (the comment lines and attributes right above it) must hold a
https://developer.apple.com/documentation/ URL, or say that it is the mirror's own (a test's record, a default that
stands in for an Objective-C optional method). Prints each declaration that does neither, and exits 1 if there is one.
Run by scripts/check-mapkit.sh.
"""

import os
import pathlib
import re
import sys

MIRROR = pathlib.Path(__file__).parent / "Sources"
APPLE = "https://developer.apple.com/documentation/"
SWIFT_DECLARATION = re.compile(
    r"^\s*(?:@[\w()]+\s+)*(?:(?:nonisolated|static|class|final|override|convenience|required)\s+)*"
    r"(?:public|open)\b.*?\b(?:func|var|let|init|class|struct|enum|protocol|typealias)\b"
)
C_DECLARATION = re.compile(r"^\s*(?:typedef\b|CLLocation\w+\s+\w+;)")
CASE = re.compile(r"^\s*case \w")
ABOVE = ("//", "@", "#if", "#else")


def unexplained(path: pathlib.Path) -> list[str]:
    lines = path.read_text().split("\n")
    found = []
    for number, line in enumerate(lines):
        if not (SWIFT_DECLARATION.match(line) or C_DECLARATION.match(line) or CASE.match(line)):
            continue
        above = []
        index = number - 1
        while index >= 0 and lines[index].strip().startswith(ABOVE):
            above.append(lines[index])
            index -= 1
        comment = " ".join(above)
        if APPLE in comment or "mirror's own" in comment:
            continue
        found.append(f"{os.path.relpath(path)}:{number + 1}: {line.strip()}")
    return found


def main() -> int:
    files = sorted(MIRROR.glob("*/*.swift")) + sorted(MIRROR.glob("*/include/*.h"))
    missing = [entry for path in files for entry in unexplained(path)]
    for entry in missing:
        print(f"no documentation URL: {entry}")
    declarations = sum(
        1
        for path in files
        for line in path.read_text().split("\n")
        if SWIFT_DECLARATION.match(line) or C_DECLARATION.match(line) or CASE.match(line)
    )
    print(f"{declarations} declarations in {len(files)} files, {len(missing)} without a documentation URL")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
