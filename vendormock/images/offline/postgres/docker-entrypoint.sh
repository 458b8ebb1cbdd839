#!/bin/sh
# First start: create the cluster with POSTGRES_USER (default postgres) and
# POSTGRES_PASSWORD (required), and the database POSTGRES_DB (default the
# user name), as the official image does. Then run `postgres "$@"`.
set -eu
if [ "${1:-}" != postgres ]; then
  exec "$@"
fi
shift
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "error: POSTGRES_PASSWORD is not set; set it (the image accepts only password logins over TCP)" >&2
    exit 1
  fi
  user=${POSTGRES_USER:-postgres}
  db=${POSTGRES_DB:-$user}
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb -D "$PGDATA" --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 >&2
  rm -f "$pwfile"
  printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  printf "listen_addresses = '*'\n" >>"$PGDATA/postgresql.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >&2
  if [ "$db" != postgres ]; then
    psql -v ON_ERROR_STOP=1 --username "$user" --dbname postgres -q \
      -c "CREATE DATABASE \"$db\"" >&2
  fi
  pg_ctl -D "$PGDATA" -m fast -w stop >&2
fi
exec postgres -D "$PGDATA" "$@"
