#!/usr/bin/env python3
"""Fails when the library uses a declaration above its Apple floors where nothing guards it.

On Linux the compiler checks no Apple availability, so this reads what Apple's compiler would:

- **What is used, and where**: the compiler's own index (`-index-store-path`) of each compile of the library, the
  MapKit adapter, the example apps and the documentation's Swift blocks (scripts/check-mapkit.sh writes it): every
  reference to a declaration, by its USR, at a line and column.
- **What each declaration needs**: for the toolchain's modules (Swift, _Concurrency, Synchronization, Observation,
  Foundation, Dispatch and whatever else the compiles import), the `@available` their interfaces carry, from the
  symbol graphs `swift symbolgraph-extract` makes of them (Linux's interfaces carry Apple's availability too); for
  declarations whose source was compiled here (the SDK mirror, whose declarations carry Apple's documented
  availability, and the library itself), the `@available` around their definition in that source. A member needs at
  least what its type needs.
- **What guards a use**: the `@available` of the declarations around it, an `if #available` (or `while`) whose body
  holds it, an `else` of an `if #unavailable`, and a `guard #available` before it in its block; a `#if` that leaves a
  platform out (`!os(watchOS)`, `canImport(UIKit)`) leaves that platform unchecked there. visionOS, where a
  declaration names none, needs what its iOS version maps to (iOS 17 and lower: visionOS 1; iOS 18: 2; 26: 26), as
  Apple's compiler infers it.
- **The floors** are the `platforms:` of the root Package.swift.

    scripts/check-availability.py --store DIR [--store DIR …] [--blocks FILE] [--platforms FOLDER=LIST …] [--only PATH …]
    scripts/check-availability.py --self-test --store DIR --modules DIR --mirror-modules DIR

Each use above a floor that nothing guards is an error line, `file:line:column: …`, naming the declaration, its
module, the versions it needs and the floors; the exit status is then 1. `--self-test` adds unguarded uses of
`TaskExecutor`, `Task.detached(executorPreference:)`, `Duration` and SwiftUI's `MapCameraPosition` (iOS 17) to a
copy of a library file and of an adapter file, beside the same uses under `@available`, `if #available` and
`guard #available`, compiles each with its module, and fails unless exactly the unguarded ones are named.
"""
from __future__ import annotations

import argparse
import bisect
import ctypes
import ctypes.util
import functools
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

ROOT = pathlib.Path(__file__).resolve().parent.parent
PLATFORMS = ["iOS", "macOS", "tvOS", "watchOS", "visionOS"]
# Names an @available or a symbol graph may give a platform, as the platform checked.
PLATFORM_NAMES = {
    "iOS": "iOS", "iOSApplicationExtension": "iOS", "macOS": "macOS", "macOSApplicationExtension": "macOS",
    "OSX": "macOS", "tvOS": "tvOS", "tvOSApplicationExtension": "tvOS", "watchOS": "watchOS",
    "watchOSApplicationExtension": "watchOS", "visionOS": "visionOS", "xrOS": "visionOS",
    "visionOSApplicationExtension": "visionOS",
}
Version = tuple[int, ...]


def version(*parts: int | str) -> Version:
    """A version as (major, minor, patch), so that 15 and 15.0 compare equal: `version("15.4")`, `version(15, 4)`."""
    numbers = [int(n) for part in parts for n in str(part).split(".")]
    return tuple((numbers + [0, 0, 0])[:3])


def show(v: Version) -> str:
    return ".".join(map(str, v if v[2] else v[:2]))


def floors(package: pathlib.Path) -> dict[str, Version]:
    """The `platforms:` of a Package.swift: `.iOS(.v15)` or `.iOS("15.4")`."""
    text = package.read_text()
    found = {}
    for match in re.finditer(r'\.(iOS|macOS|tvOS|watchOS|visionOS)\(\s*(?:\.v([\d_]+)|"([\d.]+)")\s*\)', text):
        name, short, full = match.groups()
        found[name] = version(full or short.replace("_", "."))
    missing = [p for p in PLATFORMS if p not in found]
    if missing:
        sys.exit(f"{package}: no floor for {', '.join(missing)} in its platforms:")
    return found


def vision_from_ios(ios: Version) -> Version:
    """The visionOS version Apple's compiler infers from an iOS one where a declaration names no visionOS."""
    if ios[0] >= 26:
        return ios
    return version(ios[0] - 16, ios[1], ios[2]) if ios[0] >= 18 else version(1)


def completed(needs: dict[str, Version]) -> dict[str, Version]:
    """Versions by platform, with visionOS inferred from iOS where it isn't named."""
    if "visionOS" not in needs and "iOS" in needs:
        needs = dict(needs, visionOS=vision_from_ios(needs["iOS"]))
    return needs


def raised(a: dict[str, Version], b: dict[str, Version]) -> dict[str, Version]:
    out = dict(a)
    for platform, v in b.items():
        if platform not in out or out[platform] < v:
            out[platform] = v
    return out


# MARK: - The compiler's index


class IndexStore:
    """The occurrences of an index store, read with the toolchain's libIndexStore."""

    DEFINITION, REFERENCE, IMPLICIT = 1 << 1, 1 << 2, 1 << 8
    RECORD = 2

    class StringRef(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t)]

        def text(self) -> str:
            return ctypes.string_at(self.data, self.length).decode() if self.length else ""

    def __init__(self, library: pathlib.Path):
        lib = ctypes.CDLL(str(library))
        p = ctypes.c_void_p
        ref = self.StringRef
        self.unit_applier = ctypes.CFUNCTYPE(ctypes.c_bool, p, ref)
        self.applier = ctypes.CFUNCTYPE(ctypes.c_bool, p, p)
        signatures = {
            "indexstore_store_create": (p, [ctypes.c_char_p, ctypes.POINTER(p)]),
            "indexstore_store_dispose": (None, [p]),
            "indexstore_error_get_description": (ctypes.c_char_p, [p]),
            "indexstore_store_units_apply_f": (ctypes.c_bool, [p, ctypes.c_uint, p, self.unit_applier]),
            "indexstore_unit_reader_create": (p, [p, ctypes.c_char_p, ctypes.POINTER(p)]),
            "indexstore_unit_reader_dispose": (None, [p]),
            "indexstore_unit_reader_is_system_unit": (ctypes.c_bool, [p]),
            "indexstore_unit_reader_get_module_name": (ref, [p]),
            "indexstore_unit_reader_get_working_dir": (ref, [p]),
            "indexstore_unit_reader_dependencies_apply_f": (ctypes.c_bool, [p, p, self.applier]),
            "indexstore_unit_dependency_get_kind": (ctypes.c_int, [p]),
            "indexstore_unit_dependency_get_filepath": (ref, [p]),
            "indexstore_unit_dependency_get_name": (ref, [p]),
            "indexstore_unit_dependency_get_modulename": (ref, [p]),
            "indexstore_record_reader_create": (p, [p, ctypes.c_char_p, ctypes.POINTER(p)]),
            "indexstore_record_reader_dispose": (None, [p]),
            "indexstore_record_reader_occurrences_apply_f": (ctypes.c_bool, [p, p, self.applier]),
            "indexstore_occurrence_get_symbol": (p, [p]),
            "indexstore_occurrence_get_roles": (ctypes.c_uint64, [p]),
            "indexstore_occurrence_get_line_col": (None, [p, ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint)]),
            "indexstore_symbol_get_usr": (ref, [p]),
            "indexstore_symbol_get_name": (ref, [p]),
        }
        for name, (result, arguments) in signatures.items():
            function = getattr(lib, name)
            function.restype, function.argtypes = result, arguments
        self.lib = lib

    def occurrences(self, store: pathlib.Path):
        """(module, source path, line, column, roles, usr, name) of every occurrence in the store's non-system units,
        and the names of the modules those units depend on."""
        lib = self.lib
        error = ctypes.c_void_p()
        handle = lib.indexstore_store_create(str(store).encode(), ctypes.byref(error))
        if not handle:
            sys.exit(f"{store}: not an index store ({lib.indexstore_error_get_description(error).decode()})")
        units: list[str] = []

        def on_unit(_, name):
            units.append(name.text())
            return True

        lib.indexstore_store_units_apply_f(handle, 0, None, self.unit_applier(on_unit))
        found, modules, seen_records = [], set(), set()
        for unit in units:
            reader = lib.indexstore_unit_reader_create(handle, unit.encode(), None)
            if not reader:
                continue
            if lib.indexstore_unit_reader_is_system_unit(reader):
                lib.indexstore_unit_reader_dispose(reader)
                continue
            module = lib.indexstore_unit_reader_get_module_name(reader).text()
            records = []

            def on_dependency(_, dependency):
                if lib.indexstore_unit_dependency_get_kind(dependency) == self.RECORD:
                    records.append(
                        (lib.indexstore_unit_dependency_get_filepath(dependency).text(),
                         lib.indexstore_unit_dependency_get_name(dependency).text()))
                else:
                    modules.add(lib.indexstore_unit_dependency_get_modulename(dependency).text())
                return True

            lib.indexstore_unit_reader_dependencies_apply_f(reader, None, self.applier(on_dependency))
            lib.indexstore_unit_reader_dispose(reader)
            for path, record in records:
                if (path, record) in seen_records:
                    continue
                seen_records.add((path, record))
                record_reader = lib.indexstore_record_reader_create(handle, record.encode(), None)
                if not record_reader:
                    continue

                def on_occurrence(_, occurrence):
                    symbol = lib.indexstore_occurrence_get_symbol(occurrence)
                    line, column = ctypes.c_uint(), ctypes.c_uint()
                    lib.indexstore_occurrence_get_line_col(occurrence, ctypes.byref(line), ctypes.byref(column))
                    found.append((
                        module, path, line.value, column.value, lib.indexstore_occurrence_get_roles(occurrence),
                        lib.indexstore_symbol_get_usr(symbol).text(), lib.indexstore_symbol_get_name(symbol).text()))
                    return True

                lib.indexstore_record_reader_occurrences_apply_f(record_reader, None, self.applier(on_occurrence))
                lib.indexstore_record_reader_dispose(record_reader)
        lib.indexstore_store_dispose(handle)
        return found, modules


# MARK: - The toolchain's word


@functools.cache
def target_info() -> dict:
    """`swiftc -print-target-info`, asked once."""
    return json.loads(subprocess.run(["swiftc", "-print-target-info"], capture_output=True, text=True, check=True).stdout)


def toolchain_modules_dir() -> pathlib.Path:
    info = target_info()
    return pathlib.Path(info["paths"]["runtimeResourcePath"]) / info["target"]["unversionedTriple"].split("-")[2]


def toolchain_availability(modules: set[str], cache: pathlib.Path) -> tuple[dict[str, dict[str, Version]], dict[str, str]]:
    """Each public declaration of the toolchain's modules among `modules`, by USR: the Apple versions it needs (its
    own, raised by its parents'), and the module it is in."""
    directory = toolchain_modules_dir()
    present = sorted(m for m in modules | {"Swift", "_Concurrency"} if (directory / f"{m}.swiftmodule").exists())
    target = target_info()["target"]["triple"]
    cache.mkdir(parents=True, exist_ok=True)
    own: dict[str, dict[str, Version]] = {}
    module_of: dict[str, str] = {}
    parent: dict[str, str] = {}
    defaults: dict[str, list[str]] = {}
    for module in present:
        out = cache / module
        if not out.exists():
            partial = cache / f"{module}.partial"
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir()
            subprocess.run(
                ["swift", "symbolgraph-extract", "-module-name", module, "-target", target, "-output-dir", str(partial),
                 "-minimum-access-level", "public"], check=True, capture_output=True)
            partial.rename(out)
        for graph in out.glob("*.symbols.json"):
            data = json.loads(graph.read_text())
            # `_Concurrency@Swift.symbols.json`: the declarations of _Concurrency, whatever module they extend.
            declared_in = graph.name.split("@")[0].removesuffix(".symbols.json")
            for symbol in data["symbols"]:
                usr = symbol["identifier"]["precise"]
                needs = {}
                for entry in symbol.get("availability", []):
                    platform = PLATFORM_NAMES.get(entry.get("domain", ""))
                    if platform and "introduced" in entry:
                        v = entry["introduced"]
                        needs = raised(needs, {platform: version(v["major"], v.get("minor", 0), v.get("patch", 0))})
                own[usr] = raised(own.get(usr, {}), needs)
                module_of.setdefault(usr, declared_in)
            for relation in data.get("relationships", []):
                if relation["kind"] in ("memberOf", "requirementOf", "optionalRequirementOf"):
                    parent.setdefault(relation["source"], relation["target"])
                elif relation["kind"] == "defaultImplementationOf":
                    defaults.setdefault(relation["target"], []).append(relation["source"])
    resolved: dict[str, dict[str, Version]] = {}

    def needs_of(usr: str, depth: int = 0) -> dict[str, Version]:
        if usr in resolved:
            return resolved[usr]
        needs = own.get(usr, {})
        if usr in parent and depth < 32:
            needs = raised(needs, needs_of(parent[usr], depth + 1))
        resolved[usr] = needs
        return needs

    def callable_from(usr: str) -> dict[str, Version]:
        """A requirement added later than its default implementation (the standard library's `&*`, iOS 18, over the
        extension's, always there) is callable where the default is: that is what runs on the older systems."""
        candidates = [needs_of(usr)] + [needs_of(d) for d in defaults.get(usr, [])]
        out = {}
        for platform in PLATFORMS:
            least = min(c.get(platform, version(0)) for c in candidates)
            if least > version(0):
                out[platform] = least
        return out

    return {usr: callable_from(usr) for usr in own}, module_of


# MARK: - Reading Swift for its guards

KEYWORDS_THAT_DECLARE = {
    "func", "init", "var", "let", "subscript", "struct", "class", "enum", "protocol", "actor", "extension",
    "typealias", "case", "deinit", "associatedtype", "macro",
}
MODIFIERS = {
    "public", "private", "fileprivate", "internal", "package", "open", "static", "class", "final", "override",
    "mutating", "nonmutating", "nonisolated", "lazy", "weak", "unowned", "dynamic", "convenience", "required",
    "optional", "indirect", "distributed", "consuming", "borrowing", "isolated", "prefix", "postfix", "infix",
}
PLATFORMS_OF_IMPORT = {"UIKit": {"iOS", "tvOS", "visionOS"}, "AppKit": {"macOS"}, "WatchKit": {"watchOS"}}


@dataclass
class Token:
    text: str
    line: int
    column: int  # 1-based, in UTF-8 bytes as the index counts them


def tokens(source: str) -> list[Token]:
    """Swift's tokens, without comments and with each string literal as one token; `#if` lines as one token each."""
    out: list[Token] = []
    data = source.encode()
    n = len(data)
    i, line, line_start = 0, 1, 0

    def at(k: int) -> str:
        return chr(data[k]) if k < n else ""

    def skip_string(i: int, hashes: int, multiline: bool = False) -> int:
        """From just after the opening quote(s); returns the index after the closing ones."""
        nonlocal line, line_start
        closing = b'"' * (3 if multiline else 1) + b"#" * hashes
        escape = b"\\" + b"#" * hashes
        while i < n:
            if data.startswith(closing, i):
                return i + len(closing)
            if data.startswith(escape + b"(", i):
                i += len(escape) + 1
                depth = 1
                while i < n and depth:
                    c = at(i)
                    if c == "(":
                        depth += 1
                    elif c == ")":
                        depth -= 1
                    elif c == '"':
                        i = skip_string(i + 1, 0)
                        continue
                    elif c == "\n":
                        line, line_start = line + 1, i + 1
                    i += 1
                continue
            if data.startswith(escape, i):
                i += len(escape) + 1
                continue
            if at(i) == "\n":
                line, line_start = line + 1, i + 1
            i += 1
        return i

    while i < n:
        c = at(i)
        if c == "\n":
            line, line_start = line + 1, i + 1
            i += 1
        elif c in " \t\r":
            i += 1
        elif data.startswith(b"//", i):
            while i < n and at(i) != "\n":
                i += 1
        elif data.startswith(b"/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if data.startswith(b"/*", i):
                    depth, i = depth + 1, i + 2
                elif data.startswith(b"*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if at(i) == "\n":
                        line, line_start = line + 1, i + 1
                    i += 1
        elif c == "#" and re.match(rb"#(if|elseif|else|endif)\b", data[i:i + 8]):
            end = data.find(b"\n", i)
            end = n if end < 0 else end
            out.append(Token(data[i:end].decode().split("//")[0].strip(), line, i - line_start + 1))
            i = end
        elif c == '"' or (c == "#" and re.match(rb'#+"', data[i:i + 8])):
            start, hashes = i, 0
            while at(i) == "#":
                hashes, i = hashes + 1, i + 1
            token_line, token_column = line, start - line_start + 1
            multiline = data.startswith(b'"""', i)
            i = skip_string(i + (3 if multiline else 1), hashes, multiline)
            out.append(Token('""', token_line, token_column))
        elif c.isalnum() or c in "_$@#`":
            start = i
            i += 1
            while i < n and (at(i).isalnum() or at(i) in "_$`" or data[i] >= 0x80):
                i += 1
            out.append(Token(data[start:i].decode(), line, start - line_start + 1))
        elif data[i] >= 0x80:
            start = i
            while i < n and data[i] >= 0x80:
                i += 1
            out.append(Token(data[start:i].decode(errors="replace"), line, start - line_start + 1))
        else:
            out.append(Token(c, line, i - line_start + 1))
            i += 1
    return out


def parse_available(arguments: list[str]) -> tuple[dict[str, Version], set[str]]:
    """The versions and the unavailable platforms of `@available(…)` or `#available(…)`'s arguments."""
    text = " ".join(arguments)
    needs: dict[str, Version] = {}
    unavailable: set[str] = set()
    for part in text.split(","):
        words = part.split()
        if not words or words[0] not in PLATFORM_NAMES:
            continue
        platform = PLATFORM_NAMES[words[0]]
        rest = " ".join(words[1:])
        if "unavailable" in rest:
            unavailable.add(platform)
            continue
        match = re.match(r"(?:introduced\s*:\s*)?([\d]+(?:\s*\.\s*\d+)*)", rest)
        if match:
            needs[platform] = version(match.group(1).replace(" ", ""))
    spelled = re.match(r"\s*(\w+)\s*,\s*introduced\s*:\s*([\d.\s]+)", text)
    if spelled and spelled.group(1) in PLATFORM_NAMES:
        needs[PLATFORM_NAMES[spelled.group(1)]] = version(spelled.group(2).replace(" ", ""))
    return needs, unavailable


@dataclass
class Context:
    """What is known to be true at a place in a file: the versions it runs on at least, and the platforms it
    compiles for."""

    at_least: dict[str, Version] = field(default_factory=dict)
    platforms: frozenset[str] = frozenset(PLATFORMS)

    def raised(self, needs: dict[str, Version], unavailable: set[str] = frozenset()) -> "Context":
        return Context(raised(self.at_least, completed(needs)), self.platforms - unavailable)


def platforms_of_condition(condition: str) -> frozenset[str] | None:
    """The platforms a `#if`/`#elseif` branch compiles for, where its condition says; `None` where it doesn't."""
    body = re.sub(r"^#(?:else)?if\s+", "", condition)
    allowed = set(PLATFORMS)
    for name in re.findall(r"!\s*os\((\w+)\)", body):
        allowed.discard(PLATFORM_NAMES.get(name, name))
    positives = [PLATFORM_NAMES.get(n, n) for n in re.findall(r"(?<!!)\bos\((\w+)\)", body)]
    imports = [PLATFORMS_OF_IMPORT[n] for n in re.findall(r"(?<!!)\bcanImport\((\w+)\)", body) if n in PLATFORMS_OF_IMPORT]
    if positives and "&&" not in body:
        allowed &= set(positives)
    for group in imports:
        allowed &= group
    return frozenset(allowed) if allowed != set(PLATFORMS) else None


class Guards:
    """For each token of a file, the context a use there is in."""

    def __init__(self, source: str):
        self.toks = tokens(source)
        self.context_at: dict[tuple[int, int], Context] = {}
        self._walk()
        self.places = sorted(self.context_at)

    def context(self, line: int, column: int) -> Context | None:
        """The context of the token at a place, or of the last one before it (a use inside a string's
        interpolation is inside that string's token)."""
        found = self.context_at.get((line, column))
        if found is None:
            k = bisect.bisect_right(self.places, (line, column)) - 1
            found = self.context_at[self.places[k]] if k >= 0 else None
        return found

    @staticmethod
    def _group_end(toks: list[Token], i: int) -> int:
        """The index of the `)` that closes the `(` at i."""
        depth = 0
        for k in range(i, len(toks)):
            if toks[k].text in "([":
                depth += 1
            elif toks[k].text in ")]":
                depth -= 1
                if depth == 0:
                    return k
        return len(toks) - 1

    def _attributes_before(self, introducer: int, start: int) -> tuple[dict[str, Version], set[str], int]:
        """The `@available` of the declaration introduced at `introducer`, read back over its modifiers and
        attributes (not before `start`), and the index of its first attribute or modifier."""
        toks = self.toks
        needs: dict[str, Version] = {}
        unavailable: set[str] = set()
        k, first = introducer - 1, introducer
        while k >= start:
            text = toks[k].text
            if text == ")":
                depth, opening = 0, k
                while opening >= start:
                    if toks[opening].text == ")":
                        depth += 1
                    elif toks[opening].text == "(":
                        depth -= 1
                        if depth == 0:
                            break
                    opening -= 1
                name = toks[opening - 1].text if opening - 1 >= start else ""
                if name == "@available":
                    found, gone = parse_available([t.text for t in toks[opening + 1:k]])
                    needs, unavailable = raised(needs, found), unavailable | gone
                elif not (name.startswith("@") or name in MODIFIERS):
                    break
                k = first = opening - 1
                k -= 1
            elif text.startswith("@") or text in MODIFIERS:
                first = k
                k -= 1
            else:
                break
        return needs, unavailable, first

    def _walk(self) -> None:
        toks = self.toks
        # A frame per open brace: its context, where its current statement began, its depth of parentheses, and
        # what its `guard #available`s have added.
        frames = [{"context": Context(), "start": 0, "parens": 0, "levels": [None]}]
        conditions: list[list[Context | None]] = []  # per #if: the platforms of its branch
        after_unavailable: Context | None = None  # an `if #unavailable`'s else block, if one comes next
        for i, token in enumerate(toks):
            frame = frames[-1]
            text = token.text
            if text.startswith("#if") or text.startswith("#elseif") or text.startswith("#else") or text.startswith("#endif"):
                if text.startswith("#if"):
                    conditions.append([platforms_of_condition(text)])
                elif conditions and text.startswith("#elseif"):
                    conditions[-1] = [platforms_of_condition(text)]
                elif conditions and text.startswith("#else"):
                    conditions[-1] = [None]
                elif conditions:
                    conditions.pop()
                continue
            platforms = frozenset(PLATFORMS)
            for (allowed,) in conditions:
                if allowed is not None:
                    platforms &= allowed
            # The declaration this token is part of, if any: the last introducer of its statement that is not inside
            # a group of parentheses closed before it (a token inside a parameter list belongs to the declaration
            # around it). Its attributes hold from the first of them on.
            if text in KEYWORDS_THAT_DECLARE:
                frame["levels"][-1] = i
            introducer = max((k for k in frame["levels"] if k is not None), default=None)
            needs, gone, first = ({}, set(), i) if introducer is None else self._attributes_before(
                introducer, frame["start"])
            unrefined = frame["context"].raised(needs, gone)
            unrefined = Context(unrefined.at_least, unrefined.platforms & platforms)
            # The conditions after a `#available(…)` in the same `if`, `while` or `guard` are refined by it.
            if text == "#available" and i + 1 < len(toks) and toks[i + 1].text == "(":
                frame["refined_after"] = self._group_end(toks, i + 1)
                frame["refinement"] = parse_available([t.text for t in toks[i + 2:frame["refined_after"]]])
            here = unrefined
            if frame.get("refined_after") is not None and i > frame["refined_after"]:
                here = unrefined.raised(*frame["refinement"])
            self.context_at[(token.line, token.column)] = here
            if introducer == i and (needs or gone):
                for k in range(first, i):
                    self.context_at[(toks[k].line, toks[k].column)] = here
            if text in ("(", "["):
                frame["parens"] += 1
                frame["levels"].append(None)
            elif text in (")", "]"):
                frame["parens"] -= 1
                if len(frame["levels"]) > 1:
                    frame["levels"].pop()
            elif text == ";" and frame["parens"] == 0:
                frame["start"], frame["levels"], frame["refined_after"] = i + 1, [None], None
            elif text == "{":
                header = [t.text for t in toks[frame["start"]:i]]
                kind = None
                if "#available" in header or "#unavailable" in header:
                    kind = next((w for w in header if w in ("if", "guard", "while")), None)
                child = unrefined
                if kind in ("if", "while") and "#available" in header:
                    child = unrefined.raised(*self._condition_versions(frame["start"], i, "#available"))
                elif kind == "guard" and "#unavailable" in header:
                    child = unrefined.raised(*self._condition_versions(frame["start"], i, "#unavailable"))
                if frame["parens"] == 0:
                    frame["refined_after"] = None
                if after_unavailable is not None and header == ["else"]:
                    child = after_unavailable
                after_unavailable = None
                frames.append({
                    "context": child, "start": i + 1, "parens": 0, "levels": [None], "header": header, "kind": kind,
                    "opened_at": frame["start"]})
            elif text == "}" and len(frames) > 1:
                closed = frames.pop()
                parent = frames[-1]
                if closed["kind"] == "guard" and "#available" in closed["header"]:
                    needs, gone = self._condition_versions(closed["opened_at"], i, "#available")
                    parent["context"] = parent["context"].raised(needs, gone)
                if closed["kind"] == "if" and "#unavailable" in closed["header"]:
                    after_unavailable = parent["context"].raised(
                        *self._condition_versions(closed["opened_at"], i, "#unavailable"))
                if parent["parens"] == 0:
                    parent["start"], parent["levels"], parent["refined_after"] = i + 1, [None], None

    def _condition_versions(self, start: int, end: int, word: str) -> tuple[dict[str, Version], set[str]]:
        toks = self.toks
        needs: dict[str, Version] = {}
        for k in range(start, end):
            if toks[k].text == word and k + 1 < end and toks[k + 1].text == "(":
                close = self._group_end(toks, k + 1)
                found, _ = parse_available([t.text for t in toks[k + 2:close]])
                needs = raised(needs, found)
        return needs, set()


# MARK: - The check


@dataclass
class Use:
    path: str
    line: int
    column: int
    name: str
    module: str
    above: dict[str, Version]


def place_of(path: str, line: int, blocks) -> tuple[str, int, frozenset[str]]:
    """A compiled file's path and line as the reader knows them (a documentation block's as its Markdown file's), and
    the platforms it is built for (a block's own; every one for the rest)."""
    real = os.path.realpath(path)
    if os.path.basename(real) in blocks:
        source, first, platforms = blocks[os.path.basename(real)]
        return source, first + line - 1, platforms
    try:
        return str(pathlib.Path(real).relative_to(ROOT)), line, frozenset(PLATFORMS)
    except ValueError:
        return real, line, frozenset(PLATFORMS)


def within(path: str, folders) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in folders)


def check(stores: list[pathlib.Path], package_floors: dict[str, Version], cache: pathlib.Path,
          blocks: dict[str, tuple[str, int, frozenset[str]]], only: list[str] | None = None,
          platforms_of: dict[str, frozenset[str]] | None = None) -> tuple[list[Use], dict]:
    """The uses above the floors that nothing guards, among the references of the stores in `only`'s files.

    An app's code (an example, a documentation block) is checked for the platforms it is built for (`platforms_of`,
    by folder; a block's own); the library's for every platform of the floors."""
    platforms_of = platforms_of or {}
    reader = IndexStore(pathlib.Path(os.environ.get("MAPCLUSTER_INDEXSTORE_LIB", default_libindexstore())))
    occurrences, modules = [], set()
    for store in stores:
        found, used = reader.occurrences(store)
        occurrences += found
        modules |= used
    # The declarations whose source was compiled here: their availability is that of the place they are defined.
    guards: dict[str, Guards] = {}

    def guards_of(path: str) -> Guards | None:
        real = os.path.realpath(path)
        if real not in guards:
            try:
                guards[real] = Guards(pathlib.Path(real).read_text())
            except OSError:
                guards[real] = None
        return guards[real]

    defined: dict[str, dict[str, Version]] = {}
    defined_in: dict[str, str] = {}
    for module, path, line, column, roles, usr, name in occurrences:
        if roles & IndexStore.DEFINITION and not roles & IndexStore.IMPLICIT:
            source = guards_of(path)
            context = source.context(line, column) if source else None
            if context is not None:
                defined[usr] = raised(defined.get(usr, {}), context.at_least)
                defined_in[usr] = module
    toolchain, toolchain_module = toolchain_availability(modules, cache)
    uses: dict[tuple[str, int, int, str], Use] = {}
    checked = set()
    for module, path, line, column, roles, usr, name in occurrences:
        if not roles & IndexStore.REFERENCE:
            continue
        shown_path, shown_line, built_for = place_of(path, line, blocks)
        if only and not within(shown_path, only):
            continue
        for folder, platforms in platforms_of.items():
            if within(shown_path, [folder]):
                built_for = platforms
        needs = completed(defined.get(usr) or toolchain.get(usr) or {})
        checked.add((shown_path, shown_line, column, usr))
        if not needs:
            continue
        source = guards_of(path)
        context = source.context(line, column) if source else None
        if context is None:
            continue
        above = {}
        for platform in PLATFORMS:
            if platform not in context.platforms or platform not in needs or platform not in built_for:
                continue
            covered = max(package_floors[platform], context.at_least.get(platform, version(0)))
            if needs[platform] > covered:
                above[platform] = needs[platform]
        if above:
            # One line a place: a property's accessor (`getter:automatic`) beside the property is the same use.
            key = (shown_path, shown_line, column)
            if key in uses and name.split(":")[0] in ("getter", "setter", "_modify", "_read"):
                continue
            uses[key] = Use(shown_path, shown_line, column, name, defined_in.get(usr) or toolchain_module.get(usr, "?"), above)
    stats = {"references": len(checked), "files": len({c[0] for c in checked}), "modules": sorted(modules)}
    return sorted(uses.values(), key=lambda u: (u.path, u.line, u.column)), stats


def default_libindexstore() -> str:
    swiftc = shutil.which("swiftc")
    if swiftc:
        candidate = pathlib.Path(os.path.realpath(swiftc)).parent.parent / "lib" / "libIndexStore.so"
        if candidate.exists():
            return str(candidate)
    found = ctypes.util.find_library("IndexStore")
    if not found:
        sys.exit("no libIndexStore.so beside the toolchain's swiftc: set MAPCLUSTER_INDEXSTORE_LIB")
    return found


def report(uses: list[Use], package_floors: dict[str, Version], prefix: str = "") -> None:
    for use in uses:
        needs = ", ".join(f"{p} {show(v)}" for p, v in use.above.items())
        floor = ", ".join(f"{p} {show(package_floors[p])}" for p in use.above)
        print(f"{prefix}{use.path}:{use.line}:{use.column}: error: '{use.name}' ({use.module}) needs {needs}, above the "
              f"package's floor{'s' if len(use.above) > 1 else ''} ({floor}), and no @available, if #available or "
              f"guard #available covers it here")


def platform_list(text: str) -> frozenset[str]:
    """`ios macos` or `iOS,macOS` as the platforms checked."""
    by_lower = {p.lower(): p for p in PLATFORMS}
    names = [word for word in re.split(r"[,\s]+", text) if word]
    unknown = [n for n in names if n.lower() not in by_lower]
    if unknown:
        sys.exit(f"unknown platform {unknown[0]!r}: one of {', '.join(PLATFORMS)}")
    return frozenset(by_lower[n.lower()] for n in names)


def block_map(listing: pathlib.Path | None) -> dict[str, tuple[str, int, frozenset[str]]]:
    """doc-swift-blocks.py's lines, "SOURCE:LINE FILE PLATFORMS": each block file's Markdown file, first line and
    platforms."""
    if listing is None or not listing.exists():
        return {}
    out = {}
    for row in listing.read_text().splitlines():
        place, name, *platforms = row.split()
        source, line = place.rsplit(":", 1)
        out[name] = (source, int(line), platform_list(" ".join(platforms)))
    return out


# MARK: - The check of the check

# The check's own mutations. Each line that Apple's compiler refuses at the floors ends in `// unguarded`; the check
# must name a use on each of those lines and on no other.
MUTATION_LIBRARY = """

// The availability check's own mutation: unguarded uses that Apple's compiler refuses at iOS 15, and guarded ones.
final class AvailabilityMutant: Sendable {
    func unguardedExecutor(_ executor: (any TaskExecutor)?) -> Task<Int, Never> {  // unguarded
        Task.detached(executorPreference: executor, priority: nil) { 1 }  // unguarded
    }
    func unguardedDuration() -> Duration { .seconds(1) }  // unguarded
    func unguardedInAString() -> String { "\\(Duration.seconds(1))" }  // unguarded
    @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func guardedByAttribute(_ executor: any TaskExecutor) -> Duration { _ = executor; return .seconds(1) }
    func guardedByIf(_ executor: (any Sendable)?) {
        if #available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
            _ = Task.detached(executorPreference: executor as? any TaskExecutor, priority: nil) { 1 }
        } else {
            _ = Duration.seconds(1)  // unguarded
        }
    }
    func guardedByTheConditionList() -> Bool {
        if #available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, *), Duration.seconds(1) > .zero { return true }
        return false
    }
    func guardedByGuard() -> Int {
        guard #available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, *) else { return 0 }
        return Int(Duration.seconds(2).components.seconds)
    }
    func guardedByUnavailable() -> Int {
        if #unavailable(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0) {
            return 0
        } else {
            return Int(Duration.seconds(3).components.seconds)
        }
    }
}

@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, *)
extension AvailabilityMutant {
    var guardedByTheExtension: Duration { .seconds(4) }
}
"""

MUTATION_ADAPTER = """

#if canImport(MapKit) && canImport(SwiftUI)
    // The availability check's own mutation: SwiftUI's MapCameraPosition (iOS 17) with and without a guard.
    @MainActor func availabilityMutantPosition() -> Any {
        MapCameraPosition.automatic  // unguarded
    }
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
    @MainActor func availabilityMutantGuardedPosition() -> Any { MapCameraPosition.automatic }
#endif
"""


def self_test(stores: list[pathlib.Path], modules: pathlib.Path, mirror_modules: pathlib.Path, package_floors,
              cache) -> int:
    """Compiles a library module and the adapter each with a mutated file, and checks that the uses named are on
    exactly the lines marked `// unguarded` (`stores`, the real compiles' index, give the mirror's declarations)."""
    work = pathlib.Path(tempfile.mkdtemp(prefix="availability-mutant-"))
    try:
        cases = [
            ("MapClusterManager", "Sources/MapClusterManager", "Manager/ClusterManager.swift", MUTATION_LIBRARY,
             ["-I", str(modules)], []),
            ("MapClusterMapKit", "Sources/MapClusterMapKit", "ClusterMapModel+SwiftUI.swift", MUTATION_ADAPTER,
             ["-I", str(mirror_modules), "-I", str(modules), "-Xfrontend", "-enable-objc-interop",
              "-I", str(ROOT / "Tests/AppleSDKMirror/Sources/CoreLocation/include")],
             ["-enable-upcoming-feature", "ExistentialAny", "-enable-upcoming-feature", "MemberImportVisibility"]),
        ]
        stores = list(stores)
        expected: set[tuple[str, int]] = set()
        for module, folder, mutated, mutation, search, features in cases:
            copy = work / module
            shutil.copytree(ROOT / folder, copy, ignore=shutil.ignore_patterns("*.docc"))
            target = copy / mutated
            text = target.read_text() + mutation
            target.write_text(text)
            expected |= {(f"{folder}/{mutated}", number)
                         for number, line in enumerate(text.split("\n"), start=1) if line.endswith("// unguarded")}
            store = work / f"{module}.index"
            files = sorted(str(p) for p in copy.rglob("*.swift"))
            # The library's package name, as SwiftPM gives it (its folder's), for its `package` declarations.
            flags = ["-parse-as-library", "-swift-version", "6", "-module-name", module,
                     "-package-name", ROOT.name.lower(), *search, *features]
            compiled = subprocess.run(
                ["swiftc", *flags, "-wmo", "-emit-module", "-emit-module-path", str(work / f"{module}.swiftmodule"),
                 *files], capture_output=True, text=True)
            # The index of the mutated file, with the module's other files beside it.
            indexed = compiled.returncode == 0 and subprocess.run(
                ["swiftc", *flags, "-index-file", "-index-file-path", str(target), "-index-store-path", str(store),
                 "-o", str(work / f"{module}.indexData"), *files], capture_output=True, text=True)
            if compiled.returncode != 0 or indexed.returncode != 0:
                print((compiled.stdout + compiled.stderr) if compiled.returncode else (indexed.stdout + indexed.stderr))
                print(f"the mutated copy of {module} doesn't compile")
                return 1
            stores.append(store)
        uses, _ = check(stores, package_floors, cache, {}, only=[str(work.resolve())])
        for use in uses:
            for module_name, folder, *_ in cases:
                prefix = str((work / module_name).resolve()) + "/"
                if use.path.startswith(prefix):
                    use.path = folder + "/" + use.path[len(prefix):]
        named = {(use.path, use.line) for use in uses}
        report(uses, package_floors, prefix="   (as it must) ")
        for path, line in sorted(expected - named):
            print(f"   the check missed the unguarded use added to {path}:{line}")
        for path, line in sorted(named - expected):
            print(f"   the check named a use at {path}:{line}, which a guard covers")
        if expected != named:
            return 1
        print(f"   the mutations fail it: the {len(expected)} unguarded lines named, the guarded ones passed (an "
              "@available declaration and extension, if #available and its condition list, guard #available, the "
              "else of if #unavailable)")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", action="append", type=pathlib.Path, default=[], help="an index store")
    parser.add_argument("--blocks", type=pathlib.Path, help="doc-swift-blocks.py's listing of the blocks compiled")
    parser.add_argument(
        "--only", action="append",
        help="check the uses in these files or folders (default: Sources, Examples and README.md, whose Swift blocks "
        "doc-swift-blocks.py writes; the mirror and the tests are no part of an app)")
    parser.add_argument(
        "--platforms", action="append", default=[], metavar="FOLDER=LIST",
        help="the platforms an app's folder is built for, as in Examples/UIKitExample=ios (default: every platform)")
    parser.add_argument("--cache", type=pathlib.Path, default=ROOT / ".build-availability")
    parser.add_argument("--self-test", action="store_true")
    parser.add_argument("--modules", type=pathlib.Path, help="the engine's and manager's modules (self-test)")
    parser.add_argument("--mirror-modules", type=pathlib.Path, help="the mirror's modules for iOS (self-test)")
    args = parser.parse_args()
    package_floors = floors(ROOT / "Package.swift")
    if args.self_test:
        if not args.modules or not args.mirror_modules:
            parser.error("--self-test needs --modules and --mirror-modules")
        return self_test(args.store, args.modules, args.mirror_modules, package_floors, args.cache / "toolchain")
    if not args.store:
        parser.error("give at least one --store (scripts/check-mapkit.sh writes them)")
    for store in args.store:
        if not store.exists():
            sys.exit(f"{store}: no index store here; scripts/check-mapkit.sh writes it")
    only = args.only or ["Sources", "Examples", "README.md"]
    platforms_of = {}
    for item in args.platforms:
        folder, _, names = item.partition("=")
        platforms_of[folder] = platform_list(names)
    uses, stats = check(
        args.store, package_floors, args.cache / "toolchain", block_map(args.blocks), only, platforms_of)
    floor_text = ", ".join(f"{p} {show(v)}" for p, v in package_floors.items())
    print(f"   floors (Package.swift): {floor_text}")
    print(f"   {stats['references']} references in {stats['files']} files, against the toolchain's "
          f"{', '.join(m for m in stats['modules'] if (toolchain_modules_dir() / f'{m}.swiftmodule').exists())} "
          f"and the declarations compiled here")
    report(uses, package_floors)
    if uses:
        print(f"{len(uses)} uses above the floors with nothing to guard them")
        return 1
    print("   every use above a floor is guarded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
