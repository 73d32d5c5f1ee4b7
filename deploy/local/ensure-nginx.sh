#!/usr/bin/env bash
# ensure-nginx.sh: print the path of an nginx binary, installing Debian's nginx package when none
# is found. The media benchmark (bench/mediacmp) runs it to serve the same files as an edge;
# nothing here configures or starts nginx as a service (the benchmark runs its own instance with
# its own configuration, in the foreground). With WRK=1 it also installs wrk, the load generator
# the benchmark can cross-check with. Progress goes to stderr; only the path goes to stdout.
set -euo pipefail

log() { echo "ensure-nginx: $*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    log "need root for: $*"; return 1; fi
}

find_nginx() {
  command -v nginx 2>/dev/null && return 0
  [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx && return 0
  return 1
}

pkgs=()
find_nginx >/dev/null || pkgs+=(nginx)
if [ "${WRK:-0}" = 1 ] && ! command -v wrk >/dev/null 2>&1; then pkgs+=(wrk); fi
if [ ${#pkgs[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    log "install ${pkgs[*]} with your package manager (no apt-get here)"
    exit 1
  fi
  log "installing ${pkgs[*]} (apt-get install -y --no-install-recommends ${pkgs[*]})"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  # policy-rc.d refuses service starts during the install: the package must not take port 80.
  policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod +x $policy"
    trap 'as_root rm -f '"$policy" EXIT
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >&2
fi
find_nginx || { log "nginx is still missing after the install"; exit 1; }
