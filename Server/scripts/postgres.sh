#!/usr/bin/env bash
# A throwaway PostgreSQL server on loopback for the live-data tests: `scripts/postgres.sh start` initialises one in
# /tmp/mapcluster-postgres-PORT (if need be; the postgres user must reach it) and starts it on 127.0.0.1:5433, printing the URL the tests take as
# MAPCLUSTER_POSTGRES_URL; `scripts/postgres.sh stop` stops it. Needs Debian's postgresql package; run as root, the
# server runs as the postgres user.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$bin" ]; then
    echo "no PostgreSQL server here: apt-get install postgresql" >&2
    exit 1
fi
port="${MAPCLUSTER_POSTGRES_PORT:-5433}"
data="/tmp/mapcluster-postgres-$port"
as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case "${1:-}" in
start)
    if [ ! -f "$data/PG_VERSION" ]; then
        mkdir -p "$data"
        [ "$(id -u)" = 0 ] && chown postgres "$data"
        as_owner "$bin/initdb" -D "$data" -A trust -U postgres >/dev/null
    fi
    if ! as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
        as_owner "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w \
            -o "-c listen_addresses=127.0.0.1 -p $port -k /tmp -c fsync=on -c max_connections=200" start >/dev/null
    fi
    echo "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
    ;;
stop)
    as_owner "$bin/pg_ctl" -D "$data" -m fast stop >/dev/null 2>&1 || true
    ;;
*)
    echo "usage: scripts/postgres.sh start|stop" >&2
    exit 2
    ;;
esac
