#!/usr/bin/env bash
# Relay fan-out (DESIGN.md §7): one 2500 kbit/s (BITRATE) 720p30 stream (a recorded file pushed
# by ffmpeg -re -c copy, the same bytes for both servers) relayed to N players by
# LiveLine's server and by nginx-rtmp (Debian's libnginx-mod-rtmp, 1 worker, live on).
#
# "Players per core" is measured on a slice of a core: both servers run pinned to CPU 0
# inside the same CFS quota (a cgroup, CPU=0.25 of a core by default), the load tool
# (rtmp-load) and the ffmpeg publisher on CPU 1. On a 2-core machine a whole core cannot
# be saturated: the tool, which must read every byte the server sends, runs out of its
# own core first (against nginx-rtmp at about 4000 players here). With a quarter core
# each server meets its own limit while the tool still has room (its CPU is a column).
# CPU=1 runs without a quota.
#
# For each N the players start at RAMP per second and get SETTLE seconds (LiveLine
# replays the GOP cache to every joining player, a burst that a small slice takes a few
# seconds to catch up with), then are measured for HOLD seconds while the server's CPU
# (utime+stime from /proc/PID/stat) and RSS (VmRSS) are sampled. A server's ladder
# stops at the first N where not every player keeps up. Keeping up (rtmp-load --help)
# means every frame arrived: each player counts the frames it received from its first
# keyframe in the measured window to its last, against the frames of the recording the
# publisher loops between the same two keyframes (rtmp-load --published reads the
# recording; a keyframe is known by its length); a single missing frame fails the
# player. It must also have had a lag under 1 s and media time ≥ 90% of wall time.
#
# Usage: Benchmarks/fanout.sh     (needs root for the cgroup; CPU=1 does not)
#   CPU=0.25                     cores each server gets (CFS quota); 1: no quota
#   NS="250 500 ... 5000"        player counts (default: up to 5000 with a quota,
#                                100 ... 2000 without)
#   HOLD=20  SETTLE=10           seconds measured per step, seconds before measuring
#   RAMP=250                     players/s         SERVERS="liveline nginx"
#   BITRATE=2500                 kbit/s of the recording (DESIGN also names 600)
#   SCRATCH=.build               build directory   CACHE=~/.cache/liveline-bench (recording)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
./scripts/setup
scratch=${SCRATCH:-.build}
cpu_share=${CPU:-0.25}
if [ "$cpu_share" = 1 ]; then default_ns="100 250 500 1000 2000"; else default_ns="250 500 750 1000 1250 1500 2000 2500 3000 3500 4000 4500 5000"; fi
ns=${NS:-$default_ns}
hold=${HOLD:-20}
settle=${SETTLE:-10}
ramp=${RAMP:-250}
bitrate=${BITRATE:-2500}
servers=${SERVERS:-"liveline nginx"}
cache=${CACHE:-$HOME/.cache/liveline-bench}
swift build -c release --scratch-path "$scratch" --product liveline >/dev/null
swift build -c release --scratch-path "$scratch" --product rtmp-load >/dev/null
bin=$scratch/release
ulimit -n "$(ulimit -Hn)"
bench_workspace
echo "machine: $(machine_note)"
on_cleanup() { if [ -n "${cgroup:-}" ]; then rmdir "$cgroup" 2>/dev/null || true; fi; }

# The servers' CPU slice: a cgroup with a CFS quota (v2 cpu.max or v1 cfs_quota_us).
cgroup=
if [ "$cpu_share" != 1 ]; then
  quota=$(python3 -c "print(int(float('$cpu_share') * 100000))")
  if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
    cgroup=/sys/fs/cgroup/liveline-fanout-$$
    echo +cpu >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
    mkdir "$cgroup" && echo "$quota 100000" >"$cgroup/cpu.max"
  elif [ -d /sys/fs/cgroup/cpu ]; then
    cgroup=/sys/fs/cgroup/cpu/liveline-fanout-$$
    mkdir "$cgroup" && echo 100000 >"$cgroup/cpu.cfs_period_us" && echo "$quota" >"$cgroup/cpu.cfs_quota_us"
  fi
  if [ -z "$cgroup" ] || [ ! -d "$cgroup" ]; then
    echo "fanout.sh: cannot create a cgroup with a CPU quota (needs root and the cgroup cpu controller); run with CPU=1 for no quota" >&2
    exit 2
  fi
  echo "servers limited to $cpu_share of a core: $cgroup" >&2
fi
# Runs "$@" on CPU 0 inside the servers' cgroup (exec keeps the pid).
on_server_core() {
  if [ -n "$cgroup" ]; then echo "$BASHPID" >"$cgroup/cgroup.procs"; fi
  exec taskset -c 0 "$@"
}

# The recording: 30 s of testsrc2, x264 at BITRATE kbit/s CBR-ish, a keyframe every 2 s.
# The players count their frames against it (--published).
mkdir -p "$cache"
recording=$cache/fanout-720p30-${bitrate}k.flv
if [ ! -s "$recording" ]; then
  show ffmpeg -f lavfi -i testsrc2=size=1280x720:rate=30 -t 30 -c:v libx264 -preset veryfast -b:v "${bitrate}k" ...
  ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=1280x720:rate=30 -t 30 \
    -c:v libx264 -preset veryfast -b:v "${bitrate}k" -maxrate "${bitrate}k" -bufsize "${bitrate}k" -g 60 -keyint_min 60 \
    -sc_threshold 0 -pix_fmt yuv420p -f flv "$recording.tmp"
  mv "$recording.tmp" "$recording"
fi

# CPU ticks (utime+stime) and VmRSS (KB) of a process and its children (nginx: master + worker).
family() { echo "$1"; pgrep -P "$1" || true; }
ticks() { local t=0; for p in $(family "$1"); do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo $t; }
rss() { local k=0; for p in $(family "$1"); do k=$((k + $(awk '/^VmRSS:/ {print $2}' "/proc/$p/status"))); done; echo $k; }
hz=$(getconf CLK_TCK)

start_liveline() {  # port → pid
  local port=$1 http
  http=$(free_port)
  show taskset -c 0 "$bin/liveline" serve --rtmp "127.0.0.1:$port" --http "127.0.0.1:$http" --loops 1 --max-connections 100000 >&2
  (on_server_core "$bin/liveline" serve --rtmp "127.0.0.1:$port" --http "127.0.0.1:$http" --loops 1 \
    --max-connections 100000 >"$work/liveline.out" 2>"$work/liveline.err") &
  echo $!
}

start_nginx() {  # port → pid
  local port=$1 prefix=$work/nginx
  nginx_rtmp_conf "$prefix" "$port" 20000
  show taskset -c 0 nginx -p "$prefix" -c "$prefix/nginx.conf" -e "$prefix/logs/error.log" >&2
  (on_server_core nginx -p "$prefix" -c "$prefix/nginx.conf" -e "$prefix/logs/error.log" >&2) &
  echo $!
}

results=$work/results.tsv
: >"$results"
for server in $servers; do
  port=$(free_port)
  pid=$(start_"$server" "$port")
  pids+=("$pid")
  sleep 1
  url=rtmp://127.0.0.1:$port/live/fanout
  show taskset -c 1 ffmpeg -re -stream_loop -1 -i "$recording" -c copy -f flv "$url"
  taskset -c 1 ffmpeg -hide_banner -loglevel error -re -stream_loop -1 -i "$recording" -c copy -f flv "$url" \
    </dev/null >"$work/$server.ffmpeg.log" 2>&1 &
  publisher=$!
  pids+=("$publisher")
  sleep 4
  idle_rss=$(rss "$pid")
  for n in $ns; do
    load=(taskset -c 1 "$bin/rtmp-load" "$url" -n "$n" --ramp "$ramp" --duration "$((settle + hold))" --settle "$settle" --loops 1
          --published "$recording" --json)
    show "${load[@]}"
    "${load[@]}" >"$work/$server.$n.json" 2>"$work/$server.$n.err" &
    tool=$!
    # The tool measures from SETTLE s after its last player started to its end;
    # sample the server inside that window.
    sleep "$(python3 -c "print($n / $ramp + $settle + 0.2)")"
    t0=$(ticks "$pid"); w0=$(date +%s.%N)
    peak=0
    for _ in $(seq $((hold - 3))); do
      sleep 1
      r=$(rss "$pid"); ((r > peak)) && peak=$r
    done
    t1=$(ticks "$pid"); w1=$(date +%s.%N)
    wait "$tool" || true
    cpu=$(python3 -c "print(round(($t1 - $t0) / $hz / ($w1 - $w0) * 100, 1))")
    python3 - "$work/$server.$n.json" "$server" "$n" "$cpu" "$peak" "$idle_rss" >>"$results" <<'PY'
import json, sys
path, server, n, cpu, rss, idle = sys.argv[1:]
try:
    s = json.load(open(path))
except Exception:
    s = {"keptUp": 0, "lagMs": {"p95": -1}, "firstFrameMs": {"p95": -1}, "toolCPUPercent": -1, "failed": int(n),
         "playersMissingFrames": -1, "missingFrames": -1, "publishedFrames": 0}
n, rss, idle = int(n), int(rss), int(idle)
print("\t".join(map(str, [server, n, cpu, round(rss / 1024, 1), round((rss - idle) / n, 1), s["keptUp"],
    s["playersMissingFrames"], f'{s["missingFrames"]} of {s["publishedFrames"]}',
    round(s["lagMs"]["p95"], 1), round(s["firstFrameMs"]["p95"]), round(s["toolCPUPercent"], 1), s["failed"]])))
PY
    tail -n 1 "$results"
    kept=$(tail -n 1 "$results" | cut -f6)
    if [ "$kept" != "$n" ]; then echo "$server: $kept of $n players kept up; stopping its ladder" >&2; break; fi
  done
  kill "$publisher" "$pid" 2>/dev/null || true
  wait "$publisher" "$pid" 2>/dev/null || true
  sleep 1
done

python3 - "$results" "$hold" "$ramp" "$cpu_share" "$bitrate" <<'PY'
import sys
share, bitrate = sys.argv[4], sys.argv[5]
limit = "a whole core, no quota" if share == "1" else f"a CFS quota of {share} core"
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
print(f"\nfan-out of one {bitrate} kbit/s 720p30 stream, {sys.argv[2]} s per step, players ramped at {sys.argv[3]}/s; server on CPU 0 with {limit}, load tool + publisher on CPU 1")
print("keeping up: every frame published between a player's first and last keyframes of the window arrived (counted), lag < 1 s, media time >= 90% of wall time")
head = ["server", "N", "CPU %", "RSS MB", "KB/player", "keeping up", "players missing frames", "frames missing of published",
        "p95 lag ms", "p95 first frame ms", "tool CPU %", "failed"]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for r in rows:
    print("| " + " | ".join(r) + " |")
best, cpu = {}, {}
for r in rows:
    if r[5] == r[1]:
        best[r[0]] = max(best.get(r[0], 0), int(r[1]))
        cpu[(r[0], int(r[1]))] = float(r[2])
for s in sorted({r[0] for r in rows}):
    top = max(int(r[1]) for r in rows if r[0] == s)
    held = best.get(s, 0)
    note = " (every step tried)" if held == top else ""
    print(f"{s}: largest N with every player keeping up: {held}{note}")
if "liveline" in best and "nginx" in best and best["nginx"]:
    capped = best["nginx"] == max(int(r[1]) for r in rows if r[0] == "nginx")
    print(f"players ratio liveline/nginx: {best['liveline'] / best['nginx']:.2f}" + (" (nginx held every step: a lower bound on nginx)" if capped else ""))
for n in sorted({k[1] for k in cpu}):
    if ("liveline", n) in cpu and ("nginx", n) in cpu and cpu[("nginx", n)] > 0:
        print(f"CPU at N={n}: liveline {cpu[('liveline', n)]}% vs nginx {cpu[('nginx', n)]}% (ratio {cpu[('liveline', n)] / cpu[('nginx', n)]:.2f})")
PY
echo "machine after: $(machine_note)"
