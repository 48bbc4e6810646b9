#!/usr/bin/env bash
# Glass-to-glass latency on loopback (DESIGN.md §6): a LiveLine hoster (test pattern,
# 720p30, 2500 kbit/s) pushes through a relay to a LiveLine guest; each frame carries
# its capture time in an SEI, the guest subtracts it from the wall clock when the frame
# is decoded. The same chain runs through LiveLine's server and through nginx-rtmp
# (Debian's libnginx-mod-rtmp, 1 worker), one after the other in this run.
#
# Usage: Benchmarks/latency.sh            DURATION=30 (seconds of play per server)
#        SCRATCH=/tmp/x to build elsewhere than .build
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup
scratch=${SCRATCH:-.build}
duration=${DURATION:-30}
swift build -c release --scratch-path "$scratch" --product liveline >/dev/null
bin=$scratch/release/liveline
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
show() { printf '+'; printf ' %q' "$@"; printf '\n'; }

# LiveLine's server.
rtmp_port=$(free_port); http_port=$(free_port)
show "$bin" serve --rtmp "127.0.0.1:$rtmp_port" --http "127.0.0.1:$http_port"
"$bin" serve --rtmp "127.0.0.1:$rtmp_port" --http "127.0.0.1:$http_port" >"$work/serve.out" 2>"$work/serve.err" &
pids+=($!)
for _ in $(seq 100); do grep -q '^ready' "$work/serve.out" 2>/dev/null && break; sleep 0.1; done

# nginx-rtmp, one worker.
nginx_port=$(free_port)
mkdir -p "$work/nginx/logs"
cat >"$work/nginx/nginx.conf" <<CONF
load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log warn;
events { worker_connections 1024; }
rtmp { server { listen 127.0.0.1:$nginx_port; chunk_size 4096; application live { live on; } } }
CONF
show nginx -p "$work/nginx" -c "$work/nginx/nginx.conf"
nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/nginx/logs/error.log" &
pids+=($!)
sleep 0.5

measure() {  # name url
  local name=$1 url=$2
  local host_cmd=("$bin" host "$url" --source test --duration $((duration + 4)) --stats json)
  local guest_cmd=("$bin" guest "$url" --duration "$duration" --stats json)
  show "${host_cmd[@]}"
  "${host_cmd[@]}" >"$work/$name.host" 2>"$work/$name.host.err" &
  local host_pid=$!
  sleep 1.5
  show "${guest_cmd[@]}"
  "${guest_cmd[@]}" >"$work/$name.guest" 2>"$work/$name.guest.err" || { cat "$work/$name.guest.err" >&2; return 1; }
  wait "$host_pid" || true
  grep '"event":"summary"' "$work/$name.guest" | tail -n 1 >"$work/$name.summary"
}

measure liveline "rtmp://127.0.0.1:$rtmp_port/live/bench"
measure nginx "rtmp://127.0.0.1:$nginx_port/live/bench"

python3 - "$work/liveline.summary" "$work/nginx.summary" <<'PY'
import json, sys
rows = []
for name, path in zip(["LiveLine server", "nginx-rtmp"], sys.argv[1:]):
    s = json.load(open(path))
    rows.append((name, s))
    print(f"{name:16} frames {s['frames']:5}  first frame {s['firstFrameMs']:7.1f} ms  "
          f"latency p50 {s['latencyP50Ms']:6.1f} ms  p95 {s['latencyP95Ms']:6.1f} ms")
a, b = rows[0][1], rows[1][1]
print(f"ratio nginx-rtmp / LiveLine: p50 {b['latencyP50Ms'] / a['latencyP50Ms']:.2f}x, "
      f"p95 {b['latencyP95Ms'] / a['latencyP95Ms']:.2f}x, first frame {b['firstFrameMs'] / a['firstFrameMs']:.2f}x")
PY
