#!/usr/bin/env bash
# Formats every tracked Swift file with the toolchain's swift-format, then lints strictly.
# --check: change nothing; fail if a file is not formatted or the lint finds anything (CI uses this).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
mapfile -t files < <(git ls-files '*.swift')
if [[ "${1:-}" == "--check" ]]; then
    swift format lint --strict --parallel "${files[@]}"
else
    swift format format --in-place --parallel "${files[@]}"
    swift format lint --strict --parallel "${files[@]}"
fi
