#!/usr/bin/env bash
# Installs libvips with its development files (Debian's libvips-dev, and pkg-config, which cgo
# uses to find it) when they are missing, and prints the libvips version. Only the imaging
# measurement needs it (`make bench-imaging`: the govips side, built with -tags vips); the
# product and its tests build without libvips or cgo. Idempotent and quiet when libvips is there.
# Exits non-zero when it cannot be installed.
set -euo pipefail

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else
		echo "ensure-vips: need root to run: $*" >&2; return 1; fi
}

if ! command -v pkg-config >/dev/null || ! pkg-config --exists vips; then
	echo "ensure-vips: installing libvips-dev and pkg-config (Debian packages)" >&2
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libvips-dev pkg-config >&2 ||
		{ as_root apt-get update >&2 && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libvips-dev pkg-config >&2; }
fi
pkg-config --modversion vips
