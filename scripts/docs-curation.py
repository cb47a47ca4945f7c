#!/usr/bin/env python3
"""Fails when a DocC archive's pages hold a type that no Topics section names.

docc curates what no Topics section lists into sections of its own ("Structures", "Classes"…), and says nothing. This
reads the render JSON of an archive that scripts/docs.sh built and names each such symbol that no page's own Topics
list: on the module's page anything (a type, a protocol, a top-level function or variable), on a type's page its nested
types. Members (methods, properties, cases) may stay in docc's own sections. Usage: docs-curation.py ARCHIVE. Exits 1
if it names one.
"""

import json
import pathlib
import sys

TYPE_KEYWORDS = {"struct", "class", "enum", "protocol", "typealias", "actor"}


def keyword(reference: dict) -> str | None:
    """The keyword just before the declaration's name: `var` in `class var x`, `struct` in `struct S`."""
    last = None
    for fragment in reference.get("fragments", []):
        if fragment.get("kind") == "keyword":
            last = fragment["text"]
        elif fragment.get("kind") == "identifier":
            return last
    return last


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    archive = pathlib.Path(sys.argv[1])
    pages = sorted((archive / "data" / "documentation").rglob("*.json"))
    if not pages:
        print(f"{archive}: no pages", file=sys.stderr)
        return 1
    documents = [json.loads(page.read_text()) for page in pages]
    # What some page's own Topics list (a nested type may be listed on the module's page rather than its parent's).
    curated = {identifier for document in documents for section in document.get("topicSections", [])
               if not section.get("generated") for identifier in section["identifiers"]}
    uncurated = []
    for document in documents:
        is_module = document.get("metadata", {}).get("role") == "collection"
        for section in document.get("topicSections", []):
            if not section.get("generated"):
                continue
            for identifier in section["identifiers"]:
                if identifier in curated:
                    continue
                reference = document["references"].get(identifier, {})
                if is_module or keyword(reference) in TYPE_KEYWORDS:
                    where = document["identifier"]["url"].split("/documentation/", 1)[-1]
                    uncurated.append(f"{identifier.split('/documentation/', 1)[-1]} (on {where}'s page, "
                                     f"in docc's own section {section.get('title')!r})")
    for line in uncurated:
        print(f"warning: {line} is in no Topics section: list it under one", file=sys.stderr)
    return 1 if uncurated else 0


if __name__ == "__main__":
    sys.exit(main())
