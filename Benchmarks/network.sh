#!/usr/bin/env bash
# Live over a shaped uplink: LiveLine's hoster with adaptive bitrate, the same hoster with
# --abr off, and a plain ffmpeg push, each through the same rate-limited link to LiveLine's
# server, with a LiveLine guest measuring glass-to-glass latency per frame.
#
# The link (scripts/netns-link): the senders run in one network namespace, `liveline
# serve` and the guest in another, joined by a veth pair; the senders' upload is limited
# by a tc token bucket (tbf, a 300 ms queue) whose rate follows a schedule:
#   A  4 Mbit/s for 20 s -> 1 Mbit/s for 20 s -> 4 Mbit/s for 20 s
#   B  4 Mbit/s with a 5 s dip to 600 kbit/s every 15 s (three dips, 60 s)
# No delay or loss is added (this kernel has no netem): the delay measured is what the
# queues build when a sender outruns the link. The guest side is unlimited.
#
# The senders, all 1280x720 (SIZE) at 30 fps, 2500 kbit/s H.264 (x264 veryfast, zerolatency,
# 2 s keyframe interval, 1 s VBV) plus 96 kbit/s AAC, pushing RTMP for 60 s, all from the
# same looped 10 s clip made here: ffmpeg's testsrc2 with grain (noise on every frame)
# and a 440 Hz tone. The grain makes the encoder spend the whole bitrate, as a camera's
# picture does; the test pattern alone needs a few hundred kbit/s and never fills the link.
#   abr      liveline host --source file:CLIP --stats json (adaptive bitrate, drop to
#            keyframe)
#   abr-off  the same with --abr off
#   ffmpeg   ffmpeg -stream_loop -1 -i CLIP -filter_complex realtime,… -c:v libx264
#            -preset veryfast -tune zerolatency -g 60 -b:v 2500k -maxrate 2500k
#            -bufsize 1250k -c:a aac -b:a 96k -f flv: the encoder settings of LiveLine's
#            hoster, no congestion control. The realtime/arealtime filters pace the
#            clip as -re would (-re's clock starts before the first frame is decoded,
#            which made frames reach the encoder's output before their stamped time).
# Capture time of ffmpeg's frames: LiveLine's frames carry it in an SEI (DESIGN.md §2);
# ffmpeg's get the same SEI from Benchmarks/lib/flv-capture-sei.py. ffmpeg's setpts
# filter makes each frame's timestamp its capture time on the wall clock (RTCSTART - T0
# + its place in the stream, T0 taken here just before; RTCSTART is read as the filter
# graph starts, just before the first frame is released: a frame's stamp is at most a
# few ms before it left the pacing filter), the encoder writes FLV to a pipe, the helper
# puts the SEI (T0 + timestamp) before each frame's first slice, and a second ffmpeg
# copies it unchanged (-c copy) to the server. A blocked push blocks the pipe and then
# the encoder, while the pacing keeps the frames' capture times those of a camera that
# goes on capturing (realtime=limit=3600: no reset when late): a backlog shows as
# latency, as it would from a camera.
#
# The guest (default --buffer-ms 150) logs every frame it shows (--latency-log) and its
# receive rate once a second; the hosters their encoded bitrate once a second. Results:
# a folder (printed) with table.md, network.png and the raw logs; see
# Benchmarks/lib/network-report.py for how each figure is computed.
#
# Usage: Benchmarks/network.sh                  both schedules, the three senders
#        SCHEDULES=A SENDERS=abr,ffmpeg Benchmarks/network.sh
#        LIVELINE=.build/release/liveline      use this binary (default: a release build)
#        SIZE=640x360                           a smaller picture (default 1280x720), for a
#                                               machine too slow to encode 720p30 twice over
#        RESULTS=DIR                            where the results go
#        SCRATCH=/tmp/x                         build elsewhere than .build
# Needs root (namespaces, veth, tc); installs python3-matplotlib for the plot.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
if [[ $(id -u) != 0 ]]; then
  echo "network.sh: needs root (it creates network namespaces, a veth pair and tc rate limits)" >&2
  exit 1
fi
./scripts/setup python3-matplotlib
# Debian's matplotlib is in Debian's python3 (another python3 may come first on PATH).
plot_python=/usr/bin/python3
scratch=${SCRATCH:-.build}
if [[ -n ${LIVELINE:-} ]]; then
  bin=$(realpath "$LIVELINE")
else
  swift build -c release --scratch-path "$scratch" --product liveline >/dev/null
  bin=$(realpath "$scratch/release/liveline")
fi
results=${RESULTS:-$scratch/benchmarks/network-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$results"
results=$(realpath "$results")
size=${SIZE:-1280x720}
[[ $size =~ ^[0-9]+x[0-9]+$ ]] || { echo "network.sh: SIZE must be WxH, not '$size'" >&2; exit 2; }
schedules=${SCHEDULES:-A,B}
senders=${SENDERS:-abr,abr-off,ffmpeg}
declare -A spec=(
  [A]=4000:20,1000:20,4000:20
  [B]=4000:10,600:5,4000:10,600:5,4000:10,600:5,4000:15
)
IFS=, read -ra schedule_list <<<"$schedules"
IFS=, read -ra sender_list <<<"$senders"
for schedule in "${schedule_list[@]}"; do
  [[ -n ${spec[$schedule]:-} ]] || { echo "network.sh: no schedule '$schedule' (A or B)" >&2; exit 2; }
done
for sender in "${sender_list[@]}"; do
  [[ $sender =~ ^(abr|abr-off|ffmpeg)$ ]] || { echo "network.sh: no sender '$sender' (abr, abr-off, ffmpeg)" >&2; exit 2; }
done

bench_workspace
link=""
on_cleanup() { if [[ -n $link ]]; then scripts/netns-link down "$link"; fi; }
trap 'exit 130' INT
trap 'exit 143' TERM

eval "$(scripts/netns-link up)"
echo "link $link: senders in $hoster_ns ($hoster_ip), server and guest in $server_ns ($server_ip)"
machine_note | tee "$results/machine.txt"

# Each line as it comes, after the wall clock when it came.
stamp() { python3 -u -c 'import sys, time
for line in sys.stdin: print("%.3f %s" % (time.time(), line), end="", flush=True)'; }
in_hoster() { ip netns exec "$hoster_ns" "$@"; }
in_server() { ip netns exec "$server_ns" "$@"; }

clip=$work/grainy.mp4
show ffmpeg -f lavfi -i "testsrc2=size=$size:rate=30,noise=alls=12:allf=t" … "$clip"
ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=size=$size:rate=30,noise=alls=12:allf=t" \
  -f lavfi -i sine=frequency=440:sample_rate=48000 -t 10 -c:v libx264 -preset ultrafast -crf 23 -g 30 \
  -c:a aac -b:a 96k -ac 2 "$clip"

show "$bin" serve --rtmp "$server_ip:1935" --http "$server_ip:8080" --no-auth
in_server "$bin" serve --rtmp "$server_ip:1935" --http "$server_ip:8080" --no-auth >"$results/serve.out" 2>"$results/serve.err" &
pids+=($!)
for _ in $(seq 100); do grep -q '^ready' "$results/serve.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^ready' "$results/serve.out" || { cat "$results/serve.err" >&2; exit 1; }

push_ffmpeg() {  # url seconds clip
  local url=$1 seconds=$2 clip=$3 t0
  t0=$(date +%s%6N)
  local encode=(ffmpeg -v error -nostdin -stream_loop -1 -t "$seconds" -i "$clip"
    -filter_complex "[0:v]realtime=limit=3600,settb=1/1000,setpts=PTS+(RTCSTART-$t0)/1000/1000/TB[v];[0:a]arealtime=limit=3600,asetpts=PTS+(RTCSTART-$t0)/1000000/TB[a]"
    -map "[v]" -map "[a]"
    -c:v libx264 -preset veryfast -tune zerolatency -profile:v high -g 60 -b:v 2500k -maxrate 2500k -bufsize 1250k
    -c:a aac -b:a 96k -ac 2 -f flv -flush_packets 1 -)
  local copy=(ffmpeg -v error -nostdin -f flv -i - -c copy -f flv "$url")
  show "${encode[@]}"
  show Benchmarks/lib/flv-capture-sei.py "$t0"
  show "${copy[@]}"
  "${encode[@]}" | python3 Benchmarks/lib/flv-capture-sei.py "$t0" | "${copy[@]}"
}

run() {  # schedule sender
  local schedule=$1 sender=$2
  local name=$schedule-$sender steps=${spec[$1]}
  local seconds first url=rtmp://$server_ip:1935/live/$1-$2
  seconds=$(tr ',' '\n' <<<"$steps" | awk -F: '{ s += $2 } END { print s }')
  first=${steps%%:*}
  echo "== $name: $steps (kbit/s:seconds)"
  scripts/netns-link rate "$link" "$first"
  sleep 2  # the queues of the run before drain
  local guest=("$bin" guest "$url" --stats json --latency-log "$results/$name.latency" --timeout 30
               --duration $((seconds + 30)))
  show "${guest[@]}"
  in_server "${guest[@]}" 2>"$results/$name.guest.err" | stamp >"$results/$name.guest" &
  local guest_pid=$!
  sleep 1
  scripts/netns-link schedule "$link" "$steps" >"$results/$name.capacity" &
  local schedule_pid=$!
  case $sender in
    abr | abr-off)
      local host=("$bin" host "$url" --source "file:$clip" --size "$size" --duration "$seconds" --stats json)
      [[ $sender == abr-off ]] && host+=(--abr off)
      show "${host[@]}"
      in_hoster "${host[@]}" 2>"$results/$name.host.err" | stamp >"$results/$name.host" || true
      ;;
    ffmpeg)
      in_hoster bash -c "$(declare -f show push_ffmpeg); push_ffmpeg '$url' '$seconds' '$clip'" 2>"$results/$name.ffmpeg.err" || true
      ;;
  esac
  wait "$schedule_pid"
  wait "$guest_pid" || true
  grep -q '"event":"summary"' "$results/$name.guest" || { echo "the guest of $name ended without a summary:" >&2; cat "$results/$name.guest.err" >&2; }
}

for schedule in "${schedule_list[@]}"; do
  for sender in "${sender_list[@]}"; do run "$schedule" "$sender"; done
done

echo "during the dips (targets for LiveLine with ABR: p95 <= 500 ms, < 200 ms within 3 s of the drop, bitrate back within 10 s):"
"$plot_python" Benchmarks/lib/network-report.py "$results" "$schedules" "$senders"
echo "results: $results"
