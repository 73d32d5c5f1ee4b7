#!/usr/bin/env bash
# Installs what the browser and client tests (cmd/vitrine TestBrowserStorefront,
# TestAuthorizeApplicationBrowser, TestWordPressClients, TestDevWordPressClient) need, when it is missing: Debian's
# chromium, Node.js with npm, and the node_modules of cmd/vitrine/testdata/e2e (playwright-core,
# wpapi and @wordpress/api-fetch, pinned by its package-lock.json; reinstalled when the lock file
# changes). Idempotent and quiet when everything is there. Exits non-zero when
# something cannot be installed, so that `make test` never passes with the browser test skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else
		echo "ensure-browser: need root to run: $*" >&2; return 1; fi
}

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
	echo "ensure-browser: installing ${missing[*]} (Debian packages)" >&2
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
		{ as_root apt-get update >&2 && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2; }
fi
e2e=cmd/vitrine/testdata/e2e
if ! cmp -s "$e2e/package-lock.json" "$e2e/node_modules/.vitrine-package-lock.json"; then
	echo "ensure-browser: npm ci in $e2e" >&2
	npm ci --prefix "$e2e" --no-audit --no-fund >&2
	cp "$e2e/package-lock.json" "$e2e/node_modules/.vitrine-package-lock.json"
fi
