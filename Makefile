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

.PHONY: run test build check-go vet fmt-check fuzz clean bench soak

check-go:
	@if [ -z "$(GO)" ]; then echo "make: Go 1.26 or newer is required (https://go.dev/dl/); it was not found on PATH or in /usr/local/go" >&2; exit 1; fi

build: check-go
	$(GO) build -o $(BIN) ./cmd/vitrine

run: build
	@url="$$(./deploy/local/ensure-postgres.sh)" && DATABASE_URL="$$url" exec ./$(BIN) dev

# The short bench suite (every scenario, under 5 minutes); the full run is `vitrine bench all`.
bench: build
	@url="$$(./deploy/local/ensure-postgres.sh)" && DATABASE_URL="$$url" ./$(BIN) bench -short -out bin/bench-short all

fmt-check: check-go
	@out="$$($(GOFMT) -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt would change:" $$out >&2; exit 1; fi

vet: check-go
	$(GO) vet $(PKGS)

# Tests create one fresh database per test on the server they are given, and drop it after.
# The browser test needs Chromium and playwright-core: installed first, and required (not skipped).
test: fmt-check vet
	@./deploy/local/ensure-browser.sh
	@url="$${VITRINE_TEST_DATABASE_URL:-}"; \
	if [ -z "$$url" ]; then url="$$(./deploy/local/ensure-postgres.sh)" || exit 1; url="$${url%%\?*}"; url="$${url%/*}/postgres?sslmode=disable"; fi; \
	echo "make: testing against $$url" >&2; \
	VITRINE_TEST_DATABASE_URL="$$url" VITRINE_REQUIRE_BROWSER=1 $(GO) test -race -count=1 -timeout 15m $(PKGS)

# The replication soak: the chaos test many times in a row under CPU pressure, a seed per run
# (SOAK_RUNS, default 200; see deploy/local/soak.sh). Not part of make test.
soak: check-go
	@./deploy/local/soak.sh

# Longer fuzzing of every decoder of untrusted input (the seeds also run in make test).
fuzz: check-go
	$(GO) test ./schema -run '^$$' -fuzz FuzzDecodeChange -fuzztime $(FUZZTIME)
	$(GO) test ./schema -run '^$$' -fuzz FuzzParseArgs -fuzztime $(FUZZTIME)
	$(GO) test ./schema -run '^$$' -fuzz FuzzParseRate -fuzztime $(FUZZTIME)
	$(GO) test ./schema -run '^$$' -fuzz FuzzRenderContent -fuzztime $(FUZZTIME)
	$(GO) test ./origin -run '^$$' -fuzz FuzzDecodeBodies -fuzztime $(FUZZTIME)
	$(GO) test ./origin -run '^$$' -fuzz FuzzSessionToken -fuzztime $(FUZZTIME)
	$(GO) test ./origin -run '^$$' -fuzz FuzzRequestArgs -fuzztime $(FUZZTIME)
	$(GO) test ./origin -run '^$$' -fuzz FuzzValidRedirect -fuzztime $(FUZZTIME)
	$(GO) test ./edge/cache -run '^$$' -fuzz FuzzBody -fuzztime $(FUZZTIME)
	$(GO) test ./edge -run '^$$' -fuzz FuzzRequests -fuzztime $(FUZZTIME)
	$(GO) test ./edge/replica -run '^$$' -fuzz FuzzLookupHost -fuzztime $(FUZZTIME)
	$(GO) test ./edge/reads -run '^$$' -fuzz FuzzCatalogArguments -fuzztime $(FUZZTIME)
	$(GO) test ./edge/reads -run '^$$' -fuzz FuzzConverter -fuzztime $(FUZZTIME)
	$(GO) test ./schema -run '^$$' -fuzz FuzzComputeTotals -fuzztime $(FUZZTIME)
	$(GO) test ./schema -run '^$$' -fuzz FuzzShopperInput -fuzztime $(FUZZTIME)
	$(GO) test ./edge/pipeline -run '^$$' -fuzz FuzzClientAddr -fuzztime $(FUZZTIME)
	$(GO) test ./edge/search -run '^$$' -fuzz FuzzSearch -fuzztime $(FUZZTIME)
	$(GO) test ./origin/shopify -run '^$$' -fuzz FuzzDecode -fuzztime $(FUZZTIME)
	$(GO) test ./origin/shopify -run '^$$' -fuzz FuzzParseMinor -fuzztime $(FUZZTIME)

clean:
	rm -rf bin
