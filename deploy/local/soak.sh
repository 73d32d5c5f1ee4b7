#!/usr/bin/env bash
# soak.sh: run the replication chaos test (TestChaosConvergence) many times in a row under CPU
# pressure, each run with its own seed, and report runs, failures and the first failing seed.
# Used by `make soak`; not part of `make test`.
#
#   SOAK_RUNS      how many runs (default 200)
#   SOAK_SEED      the first seed; run i uses SOAK_SEED+i (default: the current Unix time)
#   SOAK_BURNERS   busy-loop processes beside the test, the CPU pressure (default: one per core)
#   SOAK_RACE      1 (default) builds the test with the race detector, as make test does
#   SOAK_DIR       where failing runs' logs go (default bin/soak)
#
# Reproduce a failure alone: VITRINE_CHAOS_SEED=<seed> go test -race -run TestChaosConvergence ./cmd/vitrine
set -euo pipefail
cd "$(dirname "$0")/../.."

runs="${SOAK_RUNS:-200}"
seed="${SOAK_SEED:-$(date +%s)}"
burners="${SOAK_BURNERS:-$(nproc)}"
dir="${SOAK_DIR:-bin/soak}"
race=()
[ "${SOAK_RACE:-1}" = "1" ] && race=(-race)

url="${VITRINE_TEST_DATABASE_URL:-}"
if [ -z "$url" ]; then
  url="$(./deploy/local/ensure-postgres.sh)"
  url="${url%%\?*}"; url="${url%/*}/postgres?sslmode=disable"
fi
export VITRINE_TEST_DATABASE_URL="$url"

mkdir -p "$dir"
: >"$dir/held.txt"
bin="$(pwd)/$dir/chaos.test"
echo "soak: building the chaos test ${race[*]}" >&2
go test -c "${race[@]}" -o "$bin" ./cmd/vitrine

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
for _ in $(seq 1 "$burners"); do
  ( while :; do :; done ) &
  pids+=($!)
done

failures=0
first=""
start=$(date +%s)
for i in $(seq 0 $((runs - 1))); do
  s=$((seed + i))
  log="$dir/run-$s.log"
  if (cd cmd/vitrine && VITRINE_CHAOS_SEED=$s "$bin" -test.run '^TestChaosConvergence$' -test.count=1 -test.v >"../../$log" 2>&1); then
    # Keep what each replica saw: heads held until their moved states arrived, disagreements.
    grep -h "heads held" "$log" | sed "s/^ */seed $s: /" >>"$dir/held.txt" || true
    rm -f "$log"
  else
    failures=$((failures + 1))
    [ -z "$first" ] && first=$s
    echo "soak: run $((i + 1)) (seed $s) FAILED: $log" >&2
  fi
  printf 'soak: %d/%d runs, %d failed, %ds\r' $((i + 1)) "$runs" "$failures" $(( $(date +%s) - start )) >&2
done
echo >&2
held=$(awk '{for (i = 1; i <= NF; i++) if ($(i+1) == "heads") n += $i} END {print n + 0}' "$dir/held.txt")
echo "soak: $runs runs, $failures failed, first failing seed: ${first:-none} (seeds $seed..$((seed + runs - 1)), $burners CPU burners, $(( $(date +%s) - start ))s); heads held until their moved states arrived: $held"
[ "$failures" -eq 0 ]
