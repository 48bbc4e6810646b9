#!/usr/bin/env bash
# Memory per viewer (issue #17): N HTTP-FLV viewers, N WebSocket FLV viewers and N RTMP
# players of one stream, one kind after the other on the same `liveline serve`, each
# beside the same publisher: a BITRATE kbit/s 720p30 recording with AAC pushed by
# ffmpeg -re -stream_loop -1 -c copy.
#
# For each kind: the server's RSS (VmRSS) just before the viewers start, then SETTLE
# seconds after the last one started (all connected and reading, checked in
# /api/streams), and the difference divided by N. The viewers: Benchmarks/lib/
# flv-viewers.py (HTTP-FLV and WebSocket, reading and discarding) and rtmp-load (RTMP).
# A kind's viewers that do not keep up fill their queues (up to the player high
# watermark, 2 MiB each) and so raise its figure: the bytes each viewer received (the
# median; rtmp-load: the mean) are printed beside it. The kinds run in that order with a pause between them; glibc may
# keep some of the previous kind's memory, so each kind is measured from its own
# baseline.
#
# Usage: Benchmarks/http-flv-load.sh
#   N=500          viewers of each kind       BITRATE=600   kbit/s of the recording
#   SETTLE=8       seconds after the ramp     RAMP=250      viewers started per second
#   KINDS="http-flv ws-flv rtmp"              SCRATCH=.build   CACHE=~/.cache/liveline-bench
#   CONFIG=release (debug: a quick check that the script runs; not for figures)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
scratch=${SCRATCH:-.build}
n=${N:-500}
bitrate=${BITRATE:-600}
settle=${SETTLE:-8}
ramp=${RAMP:-250}
kinds=${KINDS:-"http-flv ws-flv rtmp"}
cache=${CACHE:-$HOME/.cache/liveline-bench}
config=${CONFIG:-release}
swift build -c "$config" --scratch-path "$scratch" --product liveline >/dev/null
swift build -c "$config" --scratch-path "$scratch" --product rtmp-load >/dev/null
bin=$scratch/$config
ulimit -n "$(ulimit -Hn)"
bench_workspace
echo "machine: $(machine_note)"

mkdir -p "$cache"
recording=$cache/flv-load-720p30-${bitrate}k.flv
if [ ! -s "$recording" ]; then
  show ffmpeg -f lavfi -i testsrc2=size=1280x720:rate=30 -f lavfi -i sine=frequency=440 -t 20 ... "$recording"
  ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=1280x720:rate=30 \
    -f lavfi -i sine=frequency=440:sample_rate=48000 -t 20 \
    -c:v libx264 -preset veryfast -b:v "${bitrate}k" -maxrate "${bitrate}k" -bufsize "${bitrate}k" -g 60 \
    -pix_fmt yuv420p -c:a aac -b:a 64k -f flv "$recording.tmp"
  mv "$recording.tmp" "$recording"
fi

start_serve "$bin/liveline"
server=${pids[-1]}
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$server/status"; }
players() {  # transport → players of live/load with it
  curl -s "http://127.0.0.1:$http_port/api/streams" | python3 -c '
import json, sys
streams = json.load(sys.stdin)
print(sum(1 for s in streams for p in s["playerDetails"] if p["transport"] == sys.argv[1]))' "$1"
}
show ffmpeg -re -stream_loop -1 -i "$recording" -c copy -f flv "rtmp://127.0.0.1:$rtmp_port/live/load"
ffmpeg -hide_banner -loglevel error -re -stream_loop -1 -i "$recording" -c copy -f flv \
  "rtmp://127.0.0.1:$rtmp_port/live/load" </dev/null 2>"$work/publisher.err" &
pids+=($!)
sleep 4

ramp_seconds=$(python3 -c "print(int($n / $ramp) + 1)")
hold=$((ramp_seconds + settle + 4))
printf 'kind\tviewers\tconnected\trss_before_kb\trss_with_kb\tkb_per_viewer\tbytes_each\n'
for kind in $kinds; do
  before=$(rss)
  case $kind in
    http-flv) python3 Benchmarks/lib/flv-viewers.py "http://127.0.0.1:$http_port/live/load.flv" "$n" "$hold" --ramp "$ramp" \
                >"$work/$kind.json" & ;;
    ws-flv) python3 Benchmarks/lib/flv-viewers.py "ws://127.0.0.1:$http_port/ws/live/load" "$n" "$hold" --ramp "$ramp" \
              >"$work/$kind.json" & ;;
    rtmp) "$bin/rtmp-load" "rtmp://127.0.0.1:$rtmp_port/live/load" -n "$n" --ramp "$ramp" --duration "$hold" --json \
            >"$work/$kind.json" & ;;
    *) echo "http-flv-load.sh: unknown kind $kind (http-flv, ws-flv, rtmp)" >&2; exit 2 ;;
  esac
  load=$!
  pids+=("$load")
  sleep $((ramp_seconds + settle))
  connected=$(players "$kind")
  with=$(rss)
  wait "$load" || true
  median=$(python3 -c '
import json, sys
try:
    summary = json.load(open(sys.argv[1]))
except Exception:
    summary = {}
if "bytes_median" in summary:
    print(summary["bytes_median"])
elif summary.get("players"):
    print(summary.get("bytes", 0) // summary["players"])  # rtmp-load: the mean
else:
    print("-")' "$work/$kind.json")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$n" "$connected" "$before" "$with" \
    "$(python3 -c "print(round(($with - $before) / $n, 1))")" "$median"
  sleep 3
done
