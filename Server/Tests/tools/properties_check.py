#!/usr/bin/env python3
"""Cluster properties as MapLibre's clusterProperties has them, read from outside: named reductions and several
columns of categories, in GeoJSON, in a vector tile (decoded with the PyPI package mapbox-vector-tile), and after live
edits that bring categories not seen before.

    properties_check.py BINARY

The data: the bundled cities' first 5,000, with a `size` (small, medium, large, from the population) and a `coast`
(yes or no, at random with a fixed seed). The server: `--writable --store memory --category continent --category size
--category coast --reduce people=population:sum --reduce biggest=population:max --reduce smallest=population:min`.
Prints one JSON line of figures; exits non-zero with a message on the first failure.
"""
import csv
import gzip
import http.client
import json
import os
import random
import signal
import sys
import tempfile

import mapbox_vector_tile

sys.path.insert(0, os.path.dirname(__file__))
import server_process  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOKEN = "properties-check-token-0123456789"
WORLD = "bbox=-180,-85,180,85&zoom=1"


def fail(message):
    print("FAILED: " + message, file=sys.stderr, flush=True)
    sys.exit(1)


def request(port, method, path, body=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Bearer {TOKEN}"} if body is not None else {}
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    if response.getheader("Content-Encoding") == "gzip":
        data = gzip.decompress(data)
    return response.status, data


def size(population):
    return "large" if population > 1_000_000 else ("medium" if population > 100_000 else "small")


def write_points(path):
    random.seed(7)
    with open(os.path.join(ROOT, "Sources/MapClusterSampleData/Resources/world-cities-15000.csv")) as source:
        rows = list(csv.DictReader(source))[:5000]
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "lat", "lon", "name", "population", "continent", "size", "coast"])
        for row in rows:
            population = int(row["population"])
            writer.writerow([row["id"], row["lat"], row["lon"], row["name"], population, row["continent"],
                             size(population), random.choice(["yes", "no"])])
    return rows


def clusters(port, query=WORLD):
    status, body = request(port, "GET", f"/api/clusters?{query}")
    if status != 200:
        fail(f"/api/clusters?{query}: {status} {body[:300]!r}")
    return [f["properties"] for f in json.loads(body)["features"] if f["properties"].get("cluster")]


def check_cluster(properties, where):
    count = properties["point_count"]
    for column in ("size", "coast"):
        counted = sum(v for k, v in properties.items() if k.startswith(column + "_"))
        if counted != count:
            fail(f"{where} {properties['cluster_id']}: its {column}_… add up to {counted}, not its {count} points")
    if "people" not in properties or "biggest" not in properties or "smallest" not in properties:
        fail(f"{where} {properties['cluster_id']}: no people, biggest or smallest: {sorted(properties)}")
    if not properties["smallest"] <= properties["biggest"] <= properties["people"]:
        fail(f"{where} {properties['cluster_id']}: smallest, biggest and people out of order")


def tile(port, address):
    status, body = request(port, "GET", f"/tiles/{address}.mvt")
    if status != 200:
        fail(f"tile {address}: {status}")
    layer = mapbox_vector_tile.decode(body)["clusters"]
    return [f["properties"] for f in layer["features"] if f["properties"].get("cluster")]


def compare_tile(port, where):
    """The world tile's clusters carry what /api/clusters says of the same clusters."""
    features = tile(port, "0/0/0")
    if not features:
        fail(f"{where}: the world tile has no cluster")
    for properties in features:
        check_cluster(properties, f"{where}, tile 0/0/0:")
        categories = sum(v for k, v in properties.items() if k.startswith("category_"))
        if categories != properties["point_count"]:
            fail(f"{where}, tile 0/0/0: {properties['cluster_id']}'s category_… add up to {categories}")
    return features


def totals(features, prefix):
    result = {}
    for properties in features:
        for key, value in properties.items():
            if key.startswith(prefix):
                result[key] = result.get(key, 0) + value
    return result


def feature(identifier, longitude, latitude, continent, size_value, coast="no", population=50_000):
    return {"type": "Feature", "id": identifier, "geometry": {"type": "Point", "coordinates": [longitude, latitude]},
            "properties": {"name": identifier, "population": population, "continent": continent, "size": size_value,
                           "coast": coast}}


def main():
    binary = sys.argv[1]
    work = tempfile.mkdtemp(prefix="mapcluster-properties-")
    path = os.path.join(work, "places.csv")
    rows = write_points(path)
    token = os.path.join(work, "token")
    with open(token, "w") as f:
        f.write(TOKEN + "\n")
    process, port = server_process.start(
        binary, path, "--writable", "--store", "memory", "--token-file", token, "--category", "continent",
        "--category", "size", "--category", "coast", "--reduce", "people=population:sum",
        "--reduce", "biggest=population:max", "--reduce", "smallest=population:min", name="properties_check")
    try:
        world = clusters(port)
        if not world:
            fail("the world view has no cluster")
        for properties in world:
            check_cluster(properties, "GeoJSON")
        population = sum(int(r["population"]) for r in rows)
        shown = sum(c["people"] for c in world)
        features = compare_tile(port, "before the edits")
        # The world tile holds every point, in clusters or alone: its counts of each size are the data's.
        expected = {}
        for r in rows:
            key = "size_" + size(int(r["population"]))
            expected[key] = expected.get(key, 0) + 1
        tile_sizes = totals(features, "size_")
        for single in mapbox_vector_tile.decode(request(port, "GET", "/tiles/0/0/0.mvt")[1])["clusters"]["features"]:
            if not single["properties"].get("cluster"):
                key = "size_" + single["properties"]["size"]
                tile_sizes[key] = tile_sizes.get(key, 0) + 1
        if tile_sizes != expected:
            fail(f"the world tile's sizes {tile_sizes} are not the data's {expected}")
        if shown != population:
            fail(f"the world view's people add up to {shown}, not the data's {population}")

        # A live edit with a continent and a size not seen before.
        edit = {"type": "FeatureCollection", "features": [
            feature("new-1", 160.0, -80.0, "ZZ", "huge", population=7), feature("new-2", 160.5, -80.2, "ZZ", "huge", population=9)]}
        status, body = request(port, "POST", "/api/points", json.dumps(edit))
        if status != 200:
            fail(f"an edit with new categories: {status} {body[:300]!r}")
        config = json.loads(request(port, "GET", "/api/config")[1])
        if "ZZ" not in config["categories"]:
            fail(f"/api/config's categories after the edit: {config['categories']}")
        after = clusters(port)
        for properties in after:
            check_cluster(properties, "GeoJSON after the edit")
        new = [c for c in after if c.get("categories", {}).get("ZZ")]
        if len(new) != 1 or new[0]["categories"]["ZZ"] != 2 or new[0].get("size_huge") != 2 or new[0]["smallest"] != 7:
            fail(f"the new points' cluster: {new}")
        only = clusters(port, WORLD + "&categories=ZZ")
        if [c["point_count"] for c in only] != [2]:
            fail(f"categories=ZZ shows {[c['point_count'] for c in only]}, not one cluster of 2")
        features = compare_tile(port, "after the edit")
        if not any(f.get("category_ZZ") == 2 and f.get("size_huge") == 2 for f in features):
            fail("the world tile after the edit has no cluster with category_ZZ 2 and size_huge 2")
        # The tile's fields name the new ones.
        fields = json.loads(request(port, "GET", "/tiles.json")[1])["vector_layers"][0]["fields"]
        for field in ("people", "biggest", "smallest", "category_ZZ", "size_huge", "coast_yes"):
            if field not in fields:
                fail(f"/tiles.json names no field {field}")

        # Past the limits: a clear error, and nothing changes.
        known = len(config["categories"])
        too_many = {"type": "FeatureCollection", "features": [
            feature(f"many-{i}", -170 + i * 0.1, -70.0, f"C{i:02d}", "small") for i in range(64 - known + 1)]}
        status, body = request(port, "POST", "/api/points", json.dumps(too_many))
        message = json.loads(body).get("error", "")
        if status != 400 or "category too many" not in message or "continent" not in message:
            fail(f"an edit past 64 continents: {status} {message}")
        values = {"type": "FeatureCollection", "features": [
            feature(f"sizes-{i}", -170 + i * 0.01, -60.0, "EU", f"s{i}") for i in range(260)]}
        status, body = request(port, "POST", "/api/points", json.dumps(values))
        message = json.loads(body).get("error", "")
        if status != 400 or "category too many" not in message or "size" not in message:
            fail(f"an edit past 256 sizes: {status} {message}")
        if json.loads(request(port, "GET", "/api/config")[1])["categories"] != config["categories"]:
            fail("a refused edit changed the categories")
        print(json.dumps({"clusters": len(world), "population": population, "shown_people": shown,
                          "new_category_clusters": len(new), "tile_features": len(features)}), flush=True)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


if __name__ == "__main__":
    main()
