#!/usr/bin/env bash
# Prints the Swift of README.md's MapKit quick start: the Swift block after the line
# <!-- compiled by scripts/check-mapkit.sh -->, which scripts/check-mapkit.sh (Linux, against the SDK mirror) and
# the macOS job of .github/workflows/ci.yml (against Apple's SDKs) compile. Fails if there is none.
set -euo pipefail
cd "$(dirname "$0")/.."
block=$(awk '/<!-- compiled by scripts\/check-mapkit.sh -->/ { armed = 1; next }
    armed && /^```swift$/ { inside = 1; next }
    inside && /^```$/ { inside = 0; armed = 0; next }
    inside { print }' README.md)
if [ -z "$block" ]; then
    echo "README.md has no Swift block after <!-- compiled by scripts/check-mapkit.sh -->" >&2
    exit 1
fi
printf '%s\n' "$block"
