#!/usr/bin/env python3
"""Reads a tile archive written by `mapcluster tiles` with readers MapCluster's authors didn't write, and reports what
it holds, as JSON.

    check_archive.py FILE.pmtiles     read with the PyPI package `pmtiles` (header, metadata, every tile)
    check_archive.py FILE.mbtiles     read with Python's sqlite3 (the metadata and tiles tables, as MBTiles 1.3 has them)
    check_archive.py FILE --tippecanoe-points
                                      tippecanoe's clusters count their points in `point_count` too, but carry no
                                      `cluster` property: the report counts any feature without one as one point
    check_archive.py FILE --max-zoom N
                                      decodes the tiles of zooms 0..N only (the deep zooms of a large pyramid hold
                                      millions of tiles)

Every tile is decoded with `mapbox-vector-tile`. The report: the header or metadata, and for each zoom the tiles, the
features, and the points that the features inside each tile's extent stand for (a cluster's `point_count`, 1 for a
single point). The Swift tests (Tests/mapclusterTests/TileReaderTests.swift) check it. Needs
`pip install pmtiles mapbox-vector-tile`.
"""

import collections
import gzip
import json
import sqlite3
import sys

import mapbox_vector_tile


def pmtiles_tiles(path, deepest=None):
    from pmtiles.reader import MmapSource, Reader, all_tiles
    from pmtiles.tile import Compression, TileType, zxy_to_tileid

    with open(path, "rb") as f:
        source = MmapSource(f)
        reader = Reader(source)
        header = reader.header()
        summary = {
            "format": "pmtiles",
            "version": header["version"],
            "tile_type": header["tile_type"].name if isinstance(header["tile_type"], TileType) else header["tile_type"],
            "tile_compression": header["tile_compression"].name
            if isinstance(header["tile_compression"], Compression) else header["tile_compression"],
            "min_zoom": header["min_zoom"],
            "max_zoom": header["max_zoom"],
            "clustered": header["clustered"],
            "addressed_tiles": header["addressed_tiles_count"],
            "bounds": [header["min_lon_e7"] / 1e7, header["min_lat_e7"] / 1e7,
                       header["max_lon_e7"] / 1e7, header["max_lat_e7"] / 1e7],
            "metadata": reader.metadata(),
        }
        tiles = []
        for (z, x, y), data in all_tiles(source):
            if deepest is not None and z > deepest:
                continue
            # The reader's own tile ids, against which the archive's order is checked.
            tiles.append((z, x, y, data, zxy_to_tileid(z, x, y)))
            # And its lookup by z/x/y, which walks the directories the other way.
            if reader.get(z, x, y) != data:
                raise SystemExit(f"{path}: tile {z}/{x}/{y} reads differently by z/x/y than in order")
        return summary, tiles


def mbtiles_tiles(path):
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    metadata = dict(connection.execute("SELECT name, value FROM metadata"))
    columns = [row[1] for row in connection.execute("PRAGMA table_info(tiles)")]
    summary = {"format": "mbtiles", "metadata": metadata, "tiles_columns": columns,
               "json": json.loads(metadata.get("json", "{}"))}
    tiles = []
    for z, column, row, data in connection.execute(
            "SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles ORDER BY zoom_level"):
        # MBTiles rows count from the south.
        tiles.append((z, column, (1 << z) - 1 - row, data, None))
    return summary, tiles


def main():
    path = sys.argv[1]
    tippecanoe = "--tippecanoe-points" in sys.argv[2:]
    deepest = int(sys.argv[sys.argv.index("--max-zoom") + 1]) if "--max-zoom" in sys.argv else None
    summary, tiles = pmtiles_tiles(path, deepest) if path.endswith(".pmtiles") else mbtiles_tiles(path)
    zooms = collections.defaultdict(lambda: {"tiles": 0, "features": 0, "points": 0, "bytes": 0})
    ids = [tile[4] for tile in tiles]
    summary["in_tile_id_order"] = None if None in ids else ids == sorted(ids)
    for z, x, y, data, _ in tiles:
        if deepest is not None and z > deepest:
            continue
        zoom = zooms[z]
        zoom["tiles"] += 1
        zoom["bytes"] += len(data)
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        else:
            summary["uncompressed_tiles"] = summary.get("uncompressed_tiles", 0) + 1
        layers = mapbox_vector_tile.decode(data, default_options={"y_coord_down": True})
        for name, layer in layers.items():
            extent = layer["extent"]
            for feature in layer["features"]:
                zoom["features"] += 1
                x0, y0 = feature["geometry"]["coordinates"]
                if 0 <= x0 < extent and 0 <= y0 < extent:
                    properties = feature["properties"]
                    if tippecanoe:
                        zoom["points"] += properties.get("point_count", 1)
                    else:
                        zoom["points"] += properties["point_count"] if properties.get("cluster") else 1
    summary["zooms"] = [{"z": z, **zooms[z]} for z in sorted(zooms)]
    json.dump(summary, sys.stdout, default=str)


if __name__ == "__main__":
    main()
