#!/usr/bin/env bash
# The engine (Sources/MapCluster) reads and writes memory by address in three files only: the cursors that lend it
# (Support/Cursor.swift), the radix sort and the parallel loops. Fails, naming file and line, where another of its
# files spells a pointer type or a `withUnsafe…` call; every other file goes through the cursors.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
allowed='^Sources/MapCluster/(Support/Cursor|Index/RadixSort|Index/Parallel)\.swift:'
found=$(git grep -nE 'Unsafe[A-Za-z]*Pointer|withUnsafe' -- 'Sources/MapCluster/*.swift' | grep -vE "$allowed" || true)
if [[ -n "$found" ]]; then
    echo "$found"
    echo "pointer code outside Support/Cursor.swift, Index/RadixSort.swift and Index/Parallel.swift (above): lend the" \
        "memory through a Cursor, MutableCursor or Run instead"
    exit 1
fi
echo "pointer code in the engine: $(git grep -lE 'Unsafe[A-Za-z]*Pointer|withUnsafe' -- 'Sources/MapCluster/*.swift' | wc -l) files, all of them allowed"
