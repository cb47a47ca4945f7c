#!/usr/bin/env bash
# Generates Sources/MapClusterTiles/VectorTile.pb.swift from Sources/MapClusterTiles/vector_tile.proto. Run it after
# changing the .proto, and commit the result: builds use the committed file and never run the protobuf plugin (its
# first build takes minutes).
#
# Needs protoc and protoc-gen-swift of the swift-protobuf version Package.swift names:
#   python3 -m venv .venv && .venv/bin/pip install grpcio-tools     # protoc, as `python -m grpc_tools.protoc`
#   git clone --branch 1.39.0 https://github.com/apple/swift-protobuf /tmp/swift-protobuf
#   (cd /tmp/swift-protobuf && swift build -c release --product protoc-gen-swift)
#   PROTOC_GEN_SWIFT=/tmp/swift-protobuf/.build/release/protoc-gen-swift scripts/generate-protobuf.sh
set -euo pipefail
cd "$(dirname "$0")/.."
plugin="${PROTOC_GEN_SWIFT:-$(command -v protoc-gen-swift || true)}"
[ -x "$plugin" ] || { echo "protoc-gen-swift not found: set PROTOC_GEN_SWIFT" >&2; exit 1; }
if command -v protoc >/dev/null; then protoc=(protoc); else protoc=("${PYTHON:-.venv/bin/python}" -m grpc_tools.protoc); fi
out=$(mktemp -d)
"${protoc[@]}" --plugin=protoc-gen-swift="$plugin" --swift_out="$out" --swift_opt=Visibility=Internal \
    -I Sources/MapClusterTiles Sources/MapClusterTiles/vector_tile.proto
mv "$out/vector_tile.pb.swift" Sources/MapClusterTiles/VectorTile.pb.swift
rm -rf "$out"
echo "wrote Sources/MapClusterTiles/VectorTile.pb.swift"
