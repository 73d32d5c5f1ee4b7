#!/usr/bin/env bash
# Builds the Vitrine image from deploy/container/Dockerfile, with the repository as the context.
#
#   deploy/container/build.sh              target "image": built from source in the golang stage
#                                          (needs the golang image and the Go module proxy)
#   deploy/container/build.sh --prebuilt   target "prebuilt": a static binary built here first
#                                          (CGO_ENABLED=0, -tags timetzdata,nodynamic: static),
#                                          packed FROM scratch:
#                                          no base image, works offline
#
# Environment: IMAGE (default vitrine:dev); BUILDER: docker, podman or buildah (default: the first
# found; buildah runs with chroot isolation, so it also works inside an unprivileged container,
# and with STORAGE_DRIVER=vfs where overlay is not available). Prints the image name last.
set -euo pipefail

cd "$(dirname "$0")/../.."
IMAGE="${IMAGE:-vitrine:dev}"
target=image
if [[ "${1:-}" == "--prebuilt" ]]; then
	target=prebuilt
fi

version="$(git describe --tags --always --dirty 2>/dev/null || echo unknown)"
revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
created="$(date -u +%Y-%m-%dT%H:%M:%SZ)"

if [[ "$target" == prebuilt ]]; then
	go="$(command -v go || echo /usr/local/go/bin/go)"
	mkdir -p bin/container
	CGO_ENABLED=0 "$go" build -trimpath -buildvcs=auto -tags timetzdata,nodynamic -ldflags='-s -w' \
		-o bin/container/vitrine ./cmd/vitrine
	ca=""
	for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem; do
		if [[ -s "$f" ]]; then ca="$f"; break; fi
	done
	if [[ -z "$ca" ]]; then
		echo "build.sh: no CA bundle found on this host (install ca-certificates)" >&2
		exit 1
	fi
	cp "$ca" bin/container/ca-certificates.crt
	if command -v file >/dev/null && ! file bin/container/vitrine | grep -q 'statically linked'; then
		echo "build.sh: bin/container/vitrine is not statically linked: it cannot run FROM scratch" >&2
		exit 1
	fi
	bin/container/vitrine version >&2
fi

builder="${BUILDER:-}"
if [[ -z "$builder" ]]; then
	for b in docker podman buildah; do
		if command -v "$b" >/dev/null 2>&1; then
			if [[ "$b" == docker ]] && ! docker info >/dev/null 2>&1; then
				continue # the CLI without a daemon
			fi
			builder="$b"
			break
		fi
	done
fi
args=(--target "$target" --build-arg "VERSION=$version" --build-arg "REVISION=$revision"
	--build-arg "CREATED=$created" -f deploy/container/Dockerfile -t "$IMAGE")
case "$builder" in
docker)
	# BuildKit reads deploy/container/Dockerfile.dockerignore, beside the Dockerfile, by itself.
	docker build "${args[@]}" . >&2
	;;
podman)
	podman build --format docker --ignorefile deploy/container/Dockerfile.dockerignore "${args[@]}" . >&2
	;;
buildah)
	# --format docker keeps HEALTHCHECK (the OCI image format has no field for it).
	buildah ${STORAGE_DRIVER:+--storage-driver "$STORAGE_DRIVER"} bud --isolation chroot --format docker --ignorefile deploy/container/Dockerfile.dockerignore "${args[@]}" . >&2
	;;
*)
	echo "build.sh: no image builder: install docker (with a daemon), podman or buildah" >&2
	exit 1
	;;
esac
echo "$IMAGE"
