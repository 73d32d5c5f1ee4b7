# Vitrine. The two commands that matter:
#   make run    start the product on its defaults (embedded NATS, local PostgreSQL, a demo store)
#   make test   run the whole test suite (what .ci/run calls)
# Both set up PostgreSQL when needed (deploy/local/ensure-postgres.sh): $DATABASE_URL if set, else a
# server on 127.0.0.1:5432, else the machine's cluster started, else a private cluster, installing
# Debian's postgresql package if absent.

SHELL := /bin/bash
GO := $(shell command -v go 2>/dev/null || { test -x /usr/local/go/bin/go && echo /usr/local/go/bin/go; })
GOFMT = $(dir $(GO))gofmt
BIN := bin/vitrine
PKGS := ./...
FUZZTIME ?= 20s

.PHONY: run test build check-go vet fmt-check fuzz clean bench soak openapi bench-imaging image deploy-check

check-go:
	@if [ -z "$(GO)" ]; then echo "make: Go 1.26 or newer is required (https://go.dev/dl/); it was not found on PATH or in /usr/local/go" >&2; exit 1; fi

# -buildvcs=auto: stamp the git revision that `vitrine version` prints, even where GOFLAGS turns it off.
build: check-go
	$(GO) build -trimpath -buildvcs=auto -o $(BIN) ./cmd/vitrine

run: build
	@url="$$(./deploy/local/ensure-postgres.sh)" && DATABASE_URL="$$url" exec ./$(BIN) dev

# The container image (deploy/container): the binary built here, packed FROM scratch with buildah,
# podman or docker (whichever is installed; BUILDER= picks one). `deploy/container/build.sh` with
# no flag builds from source inside the image's golang stage instead.
image: check-go
	deploy/container/build.sh --prebuilt

# The deployment files (deploy/compose, deploy/kubernetes, deploy/container) checked against the
# binary's own flags, ports and probes, and kustomize-built when kubectl is installed.
deploy-check: check-go
	$(GO) test ./cmd/vitrine -count=1 -run '^(TestProbeCommand|TestDeployYAMLParses|TestComposeMatchesBinary|TestComposeSecretsAndNATS|TestKubernetesMatchesBinary|TestKubernetesNATSCopies|TestDockerfile)$$'

# The short bench suite (every scenario, under 5 minutes); the full run is `vitrine bench all`.
bench: build
	@url="$$(./deploy/local/ensure-postgres.sh)" && DATABASE_URL="$$url" ./$(BIN) bench -short -out bin/bench-short all

fmt-check: check-go
	@out="$$($(GOFMT) -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt would change:" $$out >&2; exit 1; fi

vet: check-go
	$(GO) vet -trimpath $(PKGS)

# Tests create one fresh database per test on the server they are given, and drop it after.
# The browser test needs Chromium and playwright-core, the Stripe adapter's test stripe-mock (in
# ./bin): installed first, and required (not skipped).
# Every distinct SQL statement the store executes is recorded (VITRINE_SQL_RECORD) and, last,
# parsed with CockroachDB's grammar by origin/store/crdbcheck, which runs without -race (its
# parser is large; go vet, with the same flags, has compiled it already).
# deploy/fleet's end-to-end test runs the binary just built (VITRINE_FLEET_BINARY) in network
# namespaces; bench/cluster's tests run it too (VITRINE_BENCH_BINARY) instead of building their
# own (a whole build in a checkout elsewhere: bench/cluster took 140 s there against 43 s).
# -trimpath (here, in vet and in build): compiled packages do not depend on where the checkout
# lies, so a checkout elsewhere on the same machine (CI's) reuses the build cache instead of
# compiling every package again (go vet without it: 75 s in another directory, 1.7 s with it).
test: fmt-check vet build
	@./deploy/local/ensure-browser.sh
	@stripemock="$$(./deploy/local/ensure-stripe-mock.sh)" || exit 1; \
	url="$${VITRINE_TEST_DATABASE_URL:-}"; \
	if [ -z "$$url" ]; then url="$$(./deploy/local/ensure-postgres.sh)" || exit 1; url="$${url%%\?*}"; url="$${url%/*}/postgres?sslmode=disable"; fi; \
	echo "make: testing against $$url" >&2; \
	rec="$$(mktemp -d)"; trap 'rm -rf "$$rec"' EXIT; \
	VITRINE_TEST_DATABASE_URL="$$url" VITRINE_REQUIRE_BROWSER=1 VITRINE_SQL_RECORD="$$rec" VITRINE_STRIPE_MOCK="$$stripemock" \
		VITRINE_FLEET_BINARY="$(abspath $(BIN))" VITRINE_BENCH_BINARY="$(abspath $(BIN))" \
		$(GO) test -race -trimpath -count=1 -p 3 -timeout 15m $$($(GO) list $(PKGS) | grep -v '/crdbcheck$$') && \
	VITRINE_SQL_RECORD="$$rec" $(GO) test -trimpath -count=1 ./origin/store/crdbcheck

# Regenerate schema/openapi.json (served by edges at /api/openapi.json) from the route table and
# the handlers' types; make test fails while the committed copy is stale.
openapi: check-go
	$(GO) test ./cmd/vitrine/openapi -run '^TestDocumentIsCurrent$$' -count=1 -update

# The image processing measurement (bench/imaging): the pure-Go path against libvips (installed
# when missing by deploy/local/ensure-vips.sh; built with -tags vips), each run in its own
# process, on a generated 4000x3000 JPEG; then the pure-Go WebP encoder as WebAssembly
# (-tags nodynamic). Results in bench/results/<date>-imaging (results.json, table.md).
bench-imaging: check-go
	@./deploy/local/ensure-vips.sh >/dev/null
	@out="$$PWD/bench/results/$$(date +%F)-imaging"; \
	$(GO) test -count=1 -timeout 30m -tags vips ./bench/imaging -run '^TestMeasure$$' -v -args -measure -runs 7 -out "$$out" -label '(WebP: libwebp.so)' && \
	$(GO) test -count=1 -timeout 30m -tags nodynamic ./bench/imaging -run '^TestMeasure$$' -v -args -measure -runs 7 -out "$$out" -label '(WebP: wasm)' -mimes image/webp

# The replication soak: the chaos test many times in a row under CPU pressure, a seed per run
# (SOAK_RUNS, default 200; see deploy/local/soak.sh). Not part of make test.
soak: check-go
	@./deploy/local/soak.sh

# Longer fuzzing of every decoder of untrusted input (the seeds also run in make test): every
# Fuzz function of every package, found in the test files, each for FUZZTIME.
fuzz: check-go
	@set -e; for f in $$(git ls-files '*_test.go' 2>/dev/null || find . -name '*_test.go'); do \
	  for fn in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$$f"); do \
	    echo "fuzz: $$(dirname $$f) $$fn" >&2; \
	    $(GO) test "./$$(dirname $$f)" -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME); \
	  done; \
	done

clean:
	rm -rf bin
