#!/usr/bin/env bash
# Watching in a browser on loopback (issue 17): glass-to-glass latency and first-frame time
# of the watch page in headless Chromium, over the WebSocket FLV feed (/ws/{app}/{stream})
# and over HTTP-FLV read by fetch() (?transport=flv), both decoded with WebCodecs, and the
# WebSocket feed through the page's Media Source Extensions fallback (?decoder=mse: what a
# page that is not a secure context plays), and HLS of 1 s segments played by the watch
# page itself (?transport=hls: its own playlist poller and MPEG-TS demuxer, WebCodecs),
# beside HLS listed and HLS in Chromium's own player, all on one stream in one run. A LiveLine hoster (test pattern, 720p30, 2500 kbit/s, its tone)
# pushes to `liveline serve`; every frame carries its capture time in an SEI.
#   - watch page: capture → the picture drawn on the page's canvas (the page's own figure;
#     the screen shows it at the next vsync, up to 16 ms later; with MSE, the frame's expected
#     display time from requestVideoFrameCallback); first frame: page load
#     start → first picture, 3 page loads joining the running stream. With HLS the page joins
#     at the newest listed segment and paces what it fetches by the frames' timestamps.
#   - HLS (Benchmarks/lib/hls-latency.py): capture → the frame's segment listed in the
#     playlist, the earliest a player can fetch it: a lower bound for an HLS player, whose
#     own buffer adds to it.
#   - HLS in Chromium's own <video> (Benchmarks/lib/browser-hls-latency.py): capture → the
#     frame's expected display time (requestVideoFrameCallback), its media time mapped back
#     to the capture time through the segments' PTS; it joins the playlist the measurement
#     above kept warm (a full window: Chromium starts 3 segments behind the live edge).
#
# Usage: Benchmarks/browser.sh            30 s of measurement per player
#        DURATION=60 Benchmarks/browser.sh
#        SCRATCH=/tmp/x to build elsewhere than .build
#        LIVELINE=.build/debug/liveline DURATION=5 Benchmarks/browser.sh   checks the script, no figures
# Prints p50/p95/max per player and the first-frame times.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
./scripts/setup
scratch=${SCRATCH:-.build}
duration=${DURATION:-30}
if [[ -n ${LIVELINE:-} ]]; then
  bin=$LIVELINE  # a built liveline (a quick check of this script with a debug build)
else
  swift build -c release --scratch-path "$scratch" --product liveline >/dev/null
  bin=$scratch/release/liveline
fi
bench_workspace
start_serve "$bin"

# Players' time plus joins and the HLS warm-up: the hoster outlives all of them.
# A keyframe a second: HLS segments are cut on keyframes, so 1 s segments.
host_cmd=("$bin" host "rtmp://127.0.0.1:$rtmp_port/live/bench" --source test --size 1280x720 --fps 30 --keyint 1
          --duration $((6 * duration + 60)))
show "${host_cmd[@]}"
"${host_cmd[@]}" >"$work/host.out" 2>"$work/host.err" &
pids+=($!)
sleep 2

page="http://127.0.0.1:$http_port/watch/live/bench"
measure_page() {  # name url
  local cmd=(/usr/bin/python3 Benchmarks/lib/browser-latency.py "$2" "$duration")
  show "${cmd[@]}"
  "${cmd[@]}" >"$work/$1.ms" 2>"$work/$1.err" || { cat "$work/$1.err" >&2; return 1; }
  tail -n 1 "$work/$1.err" >"$work/$1.summary"
}
measure_page ws "$page"
measure_page flv "$page?transport=flv"
measure_page mse "$page?decoder=mse"
measure_page hls "$page?transport=hls"

hls=Benchmarks/lib/hls-latency.py
if [[ -f $hls ]]; then
  cmd=(python3 "$hls" "http://127.0.0.1:$http_port/live/bench.m3u8" "$duration")
  show "${cmd[@]}"
  "${cmd[@]}" >"$work/hls-listed.ms" 2>"$work/hls-listed.err" || { cat "$work/hls-listed.err" >&2; : >"$work/hls-listed.ms"; }
else
  echo "($hls is not here: HLS is left out)" >&2
  : >"$work/hls-listed.ms"
fi

# The same playlist in Chromium's native HLS <video> (right after the above: its segmenting still runs).
browser_hls=Benchmarks/lib/browser-hls-latency.py
if [[ -f $browser_hls ]]; then
  cmd=(/usr/bin/python3 "$browser_hls" "http://127.0.0.1:$http_port/live/bench.m3u8" "$duration")
  show "${cmd[@]}"
  "${cmd[@]}" >"$work/hls-browser.ms" 2>"$work/hls-browser.err" ||
    { cat "$work/hls-browser.err" >&2; : >"$work/hls-browser.ms"; }
  tail -n 1 "$work/hls-browser.err" >"$work/hls-browser.summary"
else
  echo "($browser_hls is not here: HLS in Chromium is left out)" >&2
  : >"$work/hls-browser.ms"
fi

# What the HLS stream holds (its window of segments and the one being cut), while it runs.
curl -s "http://127.0.0.1:$http_port/metrics" | grep -E '^liveline_hls_(streams|bytes) ' >"$work/hls.memory" || true

machine_note
echo "glass-to-glass on loopback, ${duration} s of 720p30 per player (targets: watch page p95 <= 300 ms, first frame <= 500 ms; HLS p50 <= 3 s):"
python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]

def stats(values):
    ordered = sorted(values)
    pick = lambda p: ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]
    return len(ordered), pick(50), pick(95), ordered[-1]

def read_ms(name):
    with open(os.path.join(work, name + ".ms")) as f:
        return [float(line) for line in f if line.strip()]

for name, label in [("ws", "watch page, WebSocket FLV"), ("flv", "watch page, HTTP-FLV fetch"),
                    ("mse", "watch page, WebSocket, MSE"), ("hls", "watch page, HLS 1 s segments, WebCodecs")]:
    values = read_ms(name)
    summary = json.load(open(os.path.join(work, name + ".summary")))
    n, p50, p95, top = stats(values)
    print(f"  {label:40} frames {n:6}  p50 {p50:7.1f} ms  p95 {p95:7.1f} ms  max {top:7.1f} ms  "
          f"first frame {' '.join('%d' % v for v in summary['firstFrameMs'])} ms "
          f"(after connect {' '.join('%d' % v for v in summary['connectToFirstFrameMs'])} ms)")
for name, label in [("hls-listed", "HLS 1 s segments (listed)"), ("hls-browser", "HLS 1 s segments, Chromium <video>")]:
    values = read_ms(name)
    if values:
        n, p50, p95, top = stats(values)
        print(f"  {label:40} frames {n:6}  p50 {p50:7.1f} ms  p95 {p95:7.1f} ms  max {top:7.1f} ms")
    else:
        print(f"  {label:40} not measured")
memory = dict(line.split() for line in open(os.path.join(work, "hls.memory")) if line.strip())
if memory:
    print(f"  HLS memory: {int(float(memory.get('liveline_hls_bytes', 0)))} bytes held for "
          f"{int(float(memory.get('liveline_hls_streams', 0)))} stream(s) (/metrics liveline_hls_bytes: window + segment being cut)")
PY
