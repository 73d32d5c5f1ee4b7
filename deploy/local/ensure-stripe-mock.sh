#!/usr/bin/env bash
# Installs stripe-mock (Stripe's API mock, which validates requests against Stripe's OpenAPI
# specification) into ./bin when it is missing, and prints its path. The Stripe adapter's test
# (origin/payment/stripe TestRequestsAcceptedByStripeMock) runs against it; `make test` requires
# it, so the test is never silently skipped there. Exits non-zero when it cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=v0.203.0
bin="$PWD/bin/stripe-mock"
stamp="$PWD/bin/.stripe-mock-$version"
if [ ! -x "$bin" ] || [ ! -e "$stamp" ]; then
	echo "ensure-stripe-mock: go install github.com/stripe/stripe-mock@$version" >&2
	mkdir -p bin
	GOBIN="$PWD/bin" GOFLAGS=-mod=mod go install "github.com/stripe/stripe-mock@$version" >&2
	touch "$stamp"
fi
echo "$bin"
