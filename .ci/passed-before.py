#!/usr/bin/env python3
"""The `swift test --skip` pattern of the application's tests that already passed in .ci/run's first step.

    passed-before.py BARE_LOG TEST_LIST

BARE_LOG is the output of the README's test command in step 0 (the library's run, then the application's); TEST_LIST
is `swift test --package-path Server --list-tests` of the build the last step tests. Prints one anchored regular
expression (`^(id|id|…)`) of the tests the application's run reported as passed, each by its full id, so that the last
step runs every other test once: those that need Chromium, PostgreSQL, nginx or a Python package, and the tiers step 0
left out. A test whose name two suites share is not in it (the log names a test without its suite), and neither is
one that failed or was skipped. Prints nothing when there is none.
"""

import re
import sys


def passed_names(log: str) -> set[str]:
    runs = re.split(r"^[✔✘] Test run with .*$", log, flags=re.M)
    if len(runs) < 2:
        sys.exit("passed-before.py: the log holds no finished library run before the application's")
    application = runs[1]
    names = set()
    for line in application.split("\n"):
        found = re.match(r"^✔ Test (\S+?\)) (?:with \d+ test cases? )?passed after", line)
        if found:
            names.add(found.group(1))
    return names


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    names = passed_names(open(sys.argv[1], encoding="utf-8").read())
    ids = [line.strip() for line in open(sys.argv[2], encoding="utf-8") if "/" in line]
    by_name: dict[str, list[str]] = {}
    for test in ids:
        by_name.setdefault(test.rsplit("/", 1)[1], []).append(test)
    chosen = sorted(by_name[name][0] for name in names if len(by_name.get(name, [])) == 1)
    print(f"{len(chosen)} of the application's {len(ids)} tests passed in step 0 and don't run again", file=sys.stderr)
    if chosen:
        print("^(" + "|".join(re.escape(test) for test in chosen) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
