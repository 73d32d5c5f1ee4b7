#!/usr/bin/env bash
# ensure-postgres.sh: print the URL of a PostgreSQL server that Vitrine can use without a
# password, starting or creating one when needed. Used by `make run` and `make test`.
#
# Order of preference:
#   1. $DATABASE_URL, when set (printed as is; not checked).
#   2. A server already answering on 127.0.0.1:5432 with passwordless login for user postgres.
#   3. The machine's Debian cluster, started if it is stopped, if it allows passwordless login.
#   4. A private cluster under $VITRINE_PG_DIR (default .vitrine/pg) on 127.0.0.1:5433 with trust
#      authentication, created with initdb (installing Debian's postgresql package if absent).
#      VITRINE_PG_PRIVATE=1 goes straight to it, for an isolated development database.
#
# Progress goes to stderr; only the URL goes to stdout.
set -euo pipefail

log() { echo "ensure-postgres: $*" >&2; }

if [ -n "${DATABASE_URL:-}" ]; then
  echo "$DATABASE_URL"
  exit 0
fi

# can_login HOST PORT: passwordless TCP login as postgres works.
can_login() {
  if command -v psql >/dev/null 2>&1; then
    PGCONNECT_TIMEOUT=3 psql "postgres://postgres@$1:$2/postgres?sslmode=disable" -Atqc 'SELECT 1' >/dev/null 2>&1
  else
    # Without psql, a TCP connect is the best check available.
    (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
  fi
}

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    log "need root for: $*"; return 1; fi
}

if [ "${VITRINE_PG_PRIVATE:-0}" != 1 ] && can_login 127.0.0.1 5432; then
  echo "postgres://postgres@127.0.0.1:5432/vitrine?sslmode=disable"
  exit 0
fi

# The machine's own cluster, stopped.
if [ "${VITRINE_PG_PRIVATE:-0}" != 1 ] && command -v pg_lsclusters >/dev/null 2>&1; then
  while read -r ver name port status _; do
    [ "$port" = 5432 ] || continue
    if [ "$status" != online ]; then
      log "starting PostgreSQL cluster $ver/$name"
      as_root pg_ctlcluster --skip-systemctl-redirect "$ver" "$name" start || true
      for _ in $(seq 1 30); do can_login 127.0.0.1 5432 && break; sleep 0.2; done
    fi
    if can_login 127.0.0.1 5432; then
      echo "postgres://postgres@127.0.0.1:5432/vitrine?sslmode=disable"
      exit 0
    fi
    log "cluster $ver/$name on 5432 refuses passwordless login: using a private cluster instead"
  done < <(pg_lsclusters --no-header 2>/dev/null || true)
fi

# A private cluster with trust authentication.
PGDIR="${VITRINE_PG_DIR:-.vitrine/pg}"
PGPORT="${VITRINE_PG_PORT:-5433}"
find_pg_bin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}
BIN="$(find_pg_bin)"
if [ -z "$BIN" ]; then
  log "installing Debian's postgresql package"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  BIN="$(find_pg_bin)"
fi
if [ -z "$BIN" ]; then
  log "PostgreSQL binaries not found after installation"
  exit 1
fi
if can_login 127.0.0.1 "$PGPORT"; then
  echo "postgres://postgres@127.0.0.1:$PGPORT/vitrine?sslmode=disable"
  exit 0
fi
mkdir -p "$PGDIR"
PGDIR="$(cd "$PGDIR" && pwd)"
# initdb and postgres refuse to run as root: run them as the postgres user when we are root.
run_pg() {
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql postgres
    chown -R postgres "$PGDIR"
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}
if [ ! -f "$PGDIR/data/PG_VERSION" ]; then
  log "creating a private PostgreSQL cluster in $PGDIR (trust authentication, 127.0.0.1:$PGPORT)"
  run_pg "$BIN/initdb" -D "$PGDIR/data" -U postgres --auth=trust -E UTF8 >/dev/null
fi
log "starting the private PostgreSQL cluster on 127.0.0.1:$PGPORT"
run_pg "$BIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/postgres.log" -w \
  -o "-p $PGPORT -c listen_addresses=127.0.0.1 -k $PGDIR" start >/dev/null
for _ in $(seq 1 50); do can_login 127.0.0.1 "$PGPORT" && break; sleep 0.2; done
if ! can_login 127.0.0.1 "$PGPORT"; then
  log "the private cluster does not answer; see $PGDIR/postgres.log"
  exit 1
fi
echo "postgres://postgres@127.0.0.1:$PGPORT/vitrine?sslmode=disable"
