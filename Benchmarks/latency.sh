#!/usr/bin/env bash
# Glass-to-glass latency on loopback (DESIGN.md §7): a LiveLine hoster (test pattern,
# 720p30, 2500 kbit/s) pushes through a relay to a LiveLine guest; each frame carries
# its capture time in an SEI, the guest subtracts it from the wall clock when the frame
# is decoded. The same chain runs through LiveLine's server and through nginx-rtmp
# (Debian's libnginx-mod-rtmp, 1 worker), one after the other in this run.
#
# Usage: Benchmarks/latency.sh              60 s of play per server
#        Benchmarks/latency.sh --soak 600   a 10-minute run per server
#        SCRATCH=/tmp/x to build elsewhere than .build
# Prints p50/p95/max per server and whether latency grew: the median of the last tenth
# of the frames against the first tenth (grew = more than 10 ms and 20 % higher).
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
./scripts/setup
scratch=${SCRATCH:-.build}
duration=${DURATION:-60}
if [[ ${1:-} == --soak ]]; then duration=${2:?--soak needs seconds}; fi
swift build -c release --scratch-path "$scratch" --product liveline >/dev/null
bin=$scratch/release/liveline
bench_workspace


# LiveLine's server and nginx-rtmp (one worker).
start_relays "$bin"

measure() {  # name url
  # The guest starts first and waits for the stream, so every frame it decodes is live
  # on both servers (a late joiner would also decode the GOP cache's older frames).
  local name=$1 url=$2
  local guest_cmd=("$bin" guest "$url" --duration $((duration + 2)) --stats json)
  local host_cmd=("$bin" host "$url" --source test --duration $((duration + 4)) --stats json)
  show "${guest_cmd[@]}"
  "${guest_cmd[@]}" >"$work/$name.guest" 2>"$work/$name.guest.err" &
  local guest_pid=$!
  sleep 1
  show "${host_cmd[@]}"
  "${host_cmd[@]}" >"$work/$name.host" 2>"$work/$name.host.err" &
  local host_pid=$!
  wait "$guest_pid" || { cat "$work/$name.guest.err" >&2; return 1; }
  wait "$host_pid" || true
  grep '"event":"summary"' "$work/$name.guest" | tail -n 1 >"$work/$name.summary"
}

join() {  # name url: first-frame time of guests joining a running stream, 3 joins
  local name=$1 url=$2
  local host_cmd=("$bin" host "$url" --source test --duration 9)
  show "${host_cmd[@]}"
  "${host_cmd[@]}" >/dev/null 2>&1 &
  local host_pid=$!
  sleep 1.3
  : >"$work/$name.joins"
  for _ in 1 2 3; do
    sleep 0.8
    "$bin" guest "$url" --frames 1 --stats json | grep '"event":"summary"' >>"$work/$name.joins"
  done
  wait "$host_pid" || true
}

join liveline "rtmp://127.0.0.1:$rtmp_port/live/join"
join nginx "rtmp://127.0.0.1:$nginx_port/live/join"
measure liveline "rtmp://127.0.0.1:$rtmp_port/live/bench"
measure nginx "rtmp://127.0.0.1:$nginx_port/live/bench"

echo "guest joining a running stream (2 s keyframe interval), first frame after connect, 3 joins:"
for name in liveline nginx; do
  python3 -c 'import json, sys; v = [json.loads(l)["firstFrameMs"] for l in open(sys.argv[2])]; print("  %-16s %s ms" % (sys.argv[1], "  ".join("%.0f" % x for x in v)))' "$name" "$work/$name.joins"
done
echo "glass-to-glass (capture to decode), ${duration} s of 720p30 per server (target p50 <= 120 ms, p95 <= 200 ms, no growth):"
python3 - "$work/liveline.summary" "$work/nginx.summary" <<'PY'
import json, sys
rows = []
for name, path in zip(["LiveLine server", "nginx-rtmp"], sys.argv[1:]):
    s = json.load(open(path))
    rows.append((name, s))
    start, end = s['latencyStartP50Ms'], s['latencyEndP50Ms']
    grew = end > start + 10 and end > start * 1.2
    print(f"  {name:16} frames {s['frames']:6}  p50 {s['latencyP50Ms']:6.1f} ms  p95 {s['latencyP95Ms']:6.1f} ms  "
          f"max {s['latencyMaxMs']:7.1f} ms  first/last tenth p50 {start:5.1f}/{end:5.1f} ms  grew: {'yes' if grew else 'no'}")
a, b = rows[0][1], rows[1][1]
print(f"  ratio nginx-rtmp / LiveLine: p50 {b['latencyP50Ms'] / a['latencyP50Ms']:.2f}x, "
      f"p95 {b['latencyP95Ms'] / a['latencyP95Ms']:.2f}x")
PY
