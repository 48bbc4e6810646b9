#!/usr/bin/env bash
# User-space instructions the relay executes per MB it delivers, this checkout against
# BASE (default d46c5ce, the last build with -Ounchecked), counted by valgrind's
# callgrind, so the figure does not depend on what else the machine runs (fanout.sh's CPU
# figures do: most of the relay's CPU is the kernel's socket work, the same for both
# builds, and it varies by ±10 % between runs).
#
# Each build's `liveline serve --loops 1` runs under callgrind with instrumentation off;
# ffmpeg pushes fanout.sh's recording (2500 kbit/s 720p30) and rtmp-load plays it with N
# players; once they have joined, instrumentation is on for HOLD seconds, and the
# server's bytes out (/metrics) before and after divide its instructions. The server is
# ~50x slower under callgrind, so N stays small (default 50: a 5 ms merge wait, so
# batches are short and the per-message path dominates, the worst case for checks).
#
# Usage: Benchmarks/relay-instructions.sh [BASE]      N=50 HOLD=10 RUNS=2
#   BASE_TREE=DIR uses an existing checkout of BASE (built in DIR/.build) instead of a clone.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
./scripts/setup

base=${1:-d46c5ce}
players=${N:-50}
hold=${HOLD:-10}
runs=${RUNS:-2}
here=$(pwd)
bench_workspace
cache=${CACHE:-$HOME/.cache/liveline-bench}
recording=$cache/fanout-720p30-2500k.flv
if [ ! -s "$recording" ]; then
  echo "relay-instructions.sh: run Benchmarks/fanout.sh once first (it makes $recording)" >&2
  exit 2
fi

base_checkout "$base"
for tree in "$base_tree" "$here"; do
  (cd "$tree" && swift build -c release --product liveline >/dev/null)
done
swift build -c release --product rtmp-load >/dev/null
load=$here/.build/release/rtmp-load

# Instructions per MB delivered by the relay built in $1.
per_mb() {
  local bin=$1/.build/release/liveline port http out serve publisher player b0 b1 ir
  port=$(free_port); http=$(free_port); out=$work/callgrind.out
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" \
    "$bin" serve --rtmp "127.0.0.1:$port" --http "127.0.0.1:$http" --loops 1 >"$work/serve.log" 2>&1 &
  serve=$!; pids+=("$serve")
  for _ in $(seq 200); do grep -q '^ready' "$work/serve.log" && break; sleep 0.1; done
  ffmpeg -hide_banner -loglevel error -re -stream_loop -1 -i "$recording" -c copy -f flv \
    "rtmp://127.0.0.1:$port/live/fanout" </dev/null >/dev/null 2>&1 &
  publisher=$!; pids+=("$publisher")
  sleep 3
  "$load" "rtmp://127.0.0.1:$port/live/fanout" -n "$players" --ramp 50 --duration $((hold + 20)) \
    --settle 8 --loops 1 --json >"$work/load.json" 2>/dev/null &
  player=$!; pids+=("$player")
  sleep 12
  bytes() { curl -s "http://127.0.0.1:$http/metrics" | awk '/^liveline_bytes_out_total/ {print $2}'; }
  b0=$(bytes); callgrind_control -i on "$serve" >/dev/null 2>&1
  sleep "$hold"
  callgrind_control -i off "$serve" >/dev/null 2>&1; b1=$(bytes)
  wait "$player" || true
  kill "$publisher" 2>/dev/null || true
  kill -INT "$serve"; wait "$serve" 2>/dev/null || true
  ir=$(awk '/^totals:/ {print $2; exit}' "$out")
  python3 -c "import json, sys; s = json.load(open('$work/load.json')); sys.exit(0 if s['keptUp'] == $players else 'not every player kept up: ' + str(s['keptUp']))"
  python3 -c "print(round($ir / (($b1 - $b0) / 1e6)))"
}

echo "relay: user-space instructions per MB delivered, $players players, $hold s measured, $runs runs each, alternating"
before=(); after=()
for _ in $(seq "$runs"); do
  before+=("$(per_mb "$base_tree")")
  after+=("$(per_mb "$here")")
done
python3 - "${before[*]}" "${after[*]}" "$base" <<'PY'
import sys
b = [int(x) for x in sys.argv[1].split()]; a = [int(x) for x in sys.argv[2].split()]
mb, ma = sum(b) / len(b), sum(a) / len(a)
print(f"| build | runs | mean |\n|---|---|---|")
print(f"| {sys.argv[3]} (-Ounchecked) | {', '.join(map(str, b))} | {mb:.0f} |")
print(f"| this tree | {', '.join(map(str, a))} | {ma:.0f} |")
print(f"change: {100 * (ma - mb) / mb:+.1f} %")
PY
