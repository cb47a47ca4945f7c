#!/usr/bin/env python3
"""Moves vehicles around the bundled cities through a live server's API, so that its map has something to follow.

    swift run --package-path Server mapcluster serve --writable --token-file token.txt      # in one terminal
    python3 scripts/simulate.py --token-file token.txt                # in another; open http://127.0.0.1:8080/

Each of --vehicles (10,000) starts at a random city and drives towards another city nearby, at its own speed; every
--interval seconds (1) each one moves and the moves go to POST /api/points in edits of --batch points (1,000).
Ctrl-C stops it; --remove deletes the vehicles first. Only Python's standard library is needed.
"""
import argparse
import csv
import http.client
import json
import math
import os
import random
import sys
import time
import urllib.parse

CITIES = os.path.join(os.path.dirname(__file__), "..", "Sources", "MapClusterSampleData", "Resources",
                      "world-cities-15000.csv")


def cities():
    with open(CITIES, newline="", encoding="utf-8") as file:
        return [(float(row["lat"]), float(row["lon"]), row.get("continent") or "")
                for row in csv.DictReader(file)]


def destination(latitude, longitude, bearing, kilometres):
    """The point `kilometres` away on a sphere along `bearing` (degrees)."""
    radius = 6371.0
    phi, lam, theta, delta = map(math.radians, (latitude, longitude, bearing, 0))
    delta = kilometres / radius
    phi2 = math.asin(math.sin(phi) * math.cos(delta) + math.cos(phi) * math.sin(delta) * math.cos(theta))
    lam2 = lam + math.atan2(math.sin(theta) * math.sin(delta) * math.cos(phi),
                            math.cos(delta) - math.sin(phi) * math.sin(phi2))
    longitude2 = (math.degrees(lam2) + 540) % 360 - 180
    return max(-85.0, min(85.0, math.degrees(phi2))), longitude2


def bearing(a, b):
    phi1, phi2 = math.radians(a[0]), math.radians(b[0])
    dlam = math.radians(b[1] - a[1])
    y = math.sin(dlam) * math.cos(phi2)
    x = math.cos(phi1) * math.sin(phi2) - math.sin(phi1) * math.cos(phi2) * math.cos(dlam)
    return (math.degrees(math.atan2(y, x)) + 360) % 360


def distance(a, b):
    phi1, phi2 = math.radians(a[0]), math.radians(b[0])
    dphi, dlam = phi2 - phi1, math.radians(b[1] - a[1])
    h = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlam / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(min(1.0, h)))


class Vehicle:
    def __init__(self, number, places, rng):
        self.id = "vehicle-%d" % number
        self.rng = rng
        start = rng.choice(places)
        self.position = (start[0], start[1])
        self.continent = start[2]
        self.speed = rng.uniform(30, 120)  # km/h, and the simulation runs an hour a minute
        self.target = self.pick(places)

    def pick(self, places):
        # A city within a few hundred kilometres, or any if none is found quickly.
        for _ in range(30):
            city = self.rng.choice(places)
            if distance(self.position, city) < 400:
                return city
        return self.rng.choice(places)

    def step(self, seconds, places):
        kilometres = self.speed * seconds / 60  # an hour of driving per minute of simulation
        remaining = distance(self.position, self.target)
        if remaining <= kilometres:
            self.position = (self.target[0], self.target[1])
            self.continent = self.target[2]
            self.target = self.pick(places)
        else:
            self.position = destination(self.position[0], self.position[1], bearing(self.position, self.target),
                                        kilometres)

    def feature(self):
        return {"type": "Feature", "id": self.id,
                "geometry": {"type": "Point", "coordinates": [round(self.position[1], 6), round(self.position[0], 6)]},
                "properties": {"name": self.id, "kind": "vehicle", "speed_kmh": round(self.speed),
                               "continent": self.continent}}


def send(connection, path, body, token):
    connection.request("POST", path, body=json.dumps(body),
                       headers={"Authorization": "Bearer " + token, "Content-Type": "application/geo+json"})
    response = connection.getresponse()
    answer = response.read()
    if response.status != 200:
        sys.exit("%s: %d %s" % (path, response.status, answer.decode()[:300]))
    return json.loads(answer)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="http://127.0.0.1:8080")
    parser.add_argument("--token", help="the token the server printed at start")
    parser.add_argument("--token-file", help="a file holding the token (serve --token-file)")
    parser.add_argument("--vehicles", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--ticks", type=int, default=0, help="how many rounds of moves (0: until Ctrl-C)")
    parser.add_argument("--remove", action="store_true", help="delete the vehicles first")
    parser.add_argument("--seed", type=int, default=1)
    arguments = parser.parse_args()
    token = arguments.token
    if arguments.token_file:
        with open(arguments.token_file) as file:
            token = file.readline().strip()
    if not token:
        sys.exit("give --token or --token-file: writes need the server's token")
    url = urllib.parse.urlsplit(arguments.url)
    connection = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=60)
    rng = random.Random(arguments.seed)
    places = cities()
    vehicles = [Vehicle(n, places, rng) for n in range(arguments.vehicles)]
    if arguments.remove:
        send(connection, "/api/points/delete", {"ids": [vehicle.id for vehicle in vehicles]}, token)
    tick = 0
    try:
        while arguments.ticks == 0 or tick < arguments.ticks:
            started = time.time()
            for vehicle in vehicles:
                vehicle.step(arguments.interval, places)
            latencies = []
            for first in range(0, len(vehicles), arguments.batch):
                sent = time.time()
                send(connection, "/api/points",
                     {"type": "FeatureCollection",
                      "features": [v.feature() for v in vehicles[first:first + arguments.batch]]}, token)
                latencies.append(time.time() - sent)
            tick += 1
            print("tick %d: %d vehicles moved in %d edits, slowest %.0f ms" %
                  (tick, len(vehicles), len(latencies), max(latencies) * 1000), flush=True)
            time.sleep(max(0.0, arguments.interval - (time.time() - started)))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
