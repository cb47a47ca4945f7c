#!/usr/bin/env python3
"""Counts the public declarations of each library product, and prints them.

A declaration counts when its own modifiers say `public` or `open` (after any attributes) and it is no `@_spi`
declaration, which an app can't see without asking for it by name: types, functions, initialisers, properties,
subscripts, type aliases, associated types, enum cases of public enums, and operators. `public import` lines and
`public extension` headers are not declarations of their own; a member of a `public extension` without a modifier of
its own counts, as it is public. Comments and strings are read past. The library products are those of the root
Package.swift; each is counted from its target's folder (every file, whatever platform it builds for).

    scripts/count-public-api.py [--max N] [--list PRODUCT]

--max N fails (exit 1) when the products declare more than N in all; --list prints the declarations of one product.
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PRODUCTS = ["MapCluster", "MapClusterManager", "MapClusterIO", "MapClusterMapKit"]
KEYWORDS = r"(?:func|init\??|var|let|subscript|struct|class|enum|protocol|actor|typealias|associatedtype|case|static|class|mutating|nonmutating|final|convenience|required|override|nonisolated|indirect|prefix|postfix|infix|operator|consuming|borrowing|lazy|weak|unowned|dynamic|isolated|distributed)"
DECLARATION = re.compile(r"^\s*(?P<attributes>(?:@[\w.]+(?:\([^)]*\))?\s+)*)(?P<modifiers>(?:(?:public|open|private|fileprivate|internal|package|static|class|final|override|mutating|nonmutating|convenience|required|nonisolated|indirect|lazy|weak|unowned|dynamic|consuming|borrowing|prefix|postfix|infix)(?:\([^)]*\))?\s+)*)(?P<keyword>func|init\??|var|let|subscript|struct|class|enum|protocol|actor|typealias|associatedtype|case|operator|extension)\b")


def strip_comments_and_strings(text):
    """The text with comments and string literals blanked, lines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('"""', i):
            j = text.find('"""', i + 3)
            j = n if j < 0 else j + 3
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] not in '"\n':
                j += 2 if text[j] == "\\" else 1
            out.append('""')
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def declarations(path):
    """(line, text) of each public declaration in one file."""
    text = strip_comments_and_strings(path.read_text())
    found = []
    # The braces that open a public extension, or a public enum (whose cases are public), by depth.
    depth = 0
    public_scopes = []  # (depth inside the scope, kind)
    for number, line in enumerate(text.split("\n"), 1):
        match = DECLARATION.match(line)
        if match:
            modifiers = match["modifiers"].split()
            attributes = match["attributes"]
            keyword = match["keyword"]
            spi = "@_spi" in attributes
            explicit = any(m.startswith(("public", "open")) for m in modifiers)
            hidden = any(m.startswith(("private", "fileprivate", "internal", "package")) for m in modifiers)
            inside = public_scopes[-1][1] if public_scopes and public_scopes[-1][0] == depth else None
            if keyword == "extension":
                opens = explicit and not spi
            else:
                public = (explicit or (inside in ("extension", "enum" if keyword == "case" else "") and not hidden))
                if public and not spi and not line.lstrip().startswith("import"):
                    found.append((number, line.strip()))
                opens = public and not spi and keyword in ("struct", "class", "enum", "protocol", "actor")
            if opens or (keyword == "extension" and explicit and not spi):
                kind = "extension" if keyword in ("extension", "protocol") else ("enum" if keyword == "enum" else "type")
                public_scopes.append((depth + 1, kind))
            elif keyword in ("struct", "class", "enum", "protocol", "actor", "extension"):
                public_scopes.append((depth + 1, None))
        depth += line.count("{") - line.count("}")
        while public_scopes and public_scopes[-1][0] > depth:
            public_scopes.pop()
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max", type=int)
    parser.add_argument("--list")
    args = parser.parse_args()
    total = 0
    for product in PRODUCTS:
        files = sorted((ROOT / "Sources" / product).rglob("*.swift"))
        found = [(f, d) for f in files for d in declarations(f)]
        total += len(found)
        print("%-18s %4d" % (product, len(found)))
        if args.list == product:
            for f, (number, text) in found:
                print("    %s:%d  %s" % (f.relative_to(ROOT), number, text))
    print("%-18s %4d" % ("in all", total))
    if args.max is not None and total > args.max:
        print("more than %d public declarations" % args.max, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
