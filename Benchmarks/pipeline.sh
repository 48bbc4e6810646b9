#!/usr/bin/env bash
# Hoster pipeline throughput beside ffmpeg, on the same pictures with the same x264
# settings, timed the same way, in one run (DESIGN.md §7).
#
# The pictures: FRAMES frames of ffmpeg's testsrc2 at each size, recorded once as raw
# I420 (.y4m, kept in CACHE) and read by both sides:
#   LiveLine  liveline-bench pipeline FILE FRAMES: the hoster's pipeline as `liveline host
#             --source file:FILE` builds it (its file source at the file's size, 30 fps,
#             unpaced; capture thread → queue → encode thread; the queue blocks instead of
#             dropping, so every frame is encoded), the stream recorded to .flv
#   ffmpeg    ffmpeg -i FILE -frames:v FRAMES, libx264 with the hoster's settings, to .flv
# The x264 settings of both (H264Encoder): preset veryfast, tune zerolatency, profile high,
# a keyframe every 60 frames (2 s), BITRATE kbit/s with VBV maxrate = bitrate, bufsize = half,
# repeat-headers, forced IDRs, a global header, automatic threads, a microsecond time
# base. The one difference: LiveLine adds a capture-time SEI to every frame (its
# latency measurement; about 30 bytes a frame, no encoder work). The script checks that
# both streams hold FRAMES video frames and that the options x264 wrote into each stream
# (its own SEI) are the same, and stops if not.
#
# Timing, both sides alike: `timed` (common.sh) around the process, wall seconds on the
# monotonic clock from before its start to after its exit, and its user + system CPU
# (getrusage). RUNS pairs per size, alternating which side goes first; each pair gives
# the ratios LiveLine/ffmpeg of fps (above 1: LiveLine faster) and of CPU seconds (below
# 1: LiveLine cheaper); the summary is the median of the pairs. The per-stage costs
# (liveline-bench WxH 0: source, beauty, YUYV→I420, encode, each timed alone) come first,
# for information; they are not part of the comparison.
#
# Usage: Benchmarks/pipeline.sh
#   SIZES="1280x720 1920x1080"  FRAMES=600  RUNS=3  BITRATE=2500
#   SCRATCH=.build  build directory         CACHE=~/.cache/liveline-bench (the .y4m files)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
./scripts/setup
scratch=${SCRATCH:-.build}
sizes=${SIZES:-"1280x720 1920x1080"}
frames=${FRAMES:-600}
runs=${RUNS:-3}
bitrate=${BITRATE:-2500}
cache=${CACHE:-$HOME/.cache/liveline-bench}
swift build -c release --scratch-path "$scratch" --product liveline-bench >/dev/null
bench=$scratch/release/liveline-bench
bench_workspace
mkdir -p "$cache"
echo "machine: $(machine_note)"

# The x264 settings H264Encoder gives libx264, as ffmpeg options.
x264_args=(-c:v libx264 -preset veryfast -tune zerolatency -profile:v high -g 60
           -b:v "${bitrate}k" -maxrate "${bitrate}k" -bufsize "$((bitrate / 2))k"
           -forced-idr 1 -x264-params repeat-headers=1 -flags +global_header -enc_time_base:v 1:1000000)

# The options string x264 writes into the first frame of a stream it encoded.
x264_options() { grep -a -o 'options: [ -~]*' "$1" | head -n 1; }
video_frames() {
  ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$1"
}

summary=$work/summary.tsv
: >"$summary"
for size in $sizes; do
  echo "== $size =="
  clip=$cache/testsrc2-$size-$frames.y4m
  if [ ! -s "$clip" ]; then
    show ffmpeg -f lavfi -i "testsrc2=size=$size:rate=30" -frames:v "$frames" -pix_fmt yuv420p "$clip"
    ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=size=$size:rate=30" -frames:v "$frames" -pix_fmt yuv420p "$clip.tmp.y4m"
    mv "$clip.tmp.y4m" "$clip"
  fi
  cat "$clip" >/dev/null  # both sides read it from the page cache

  stages=$("$bench" "$size" 0 "$bitrate")
  echo "$stages"  # not tee /dev/stderr: reopened, a log file given as 2> would be overwritten from its start
  ours_cmd=("$bench" pipeline "$clip" "$frames" "$bitrate" "$work/liveline.flv")
  theirs_cmd=(ffmpeg -v error -nostdin -y -i "$clip" -frames:v "$frames" "${x264_args[@]}" -f flv "$work/ffmpeg.flv")
  show "${ours_cmd[@]}"
  show "${theirs_cmd[@]}"
  for run in $(seq "$runs"); do
    if ((run % 2)); then order="liveline ffmpeg"; else order="ffmpeg liveline"; fi
    for side in $order; do
      if [ "$side" = liveline ]; then
        timed "$work/$side.time" "${ours_cmd[@]}" >"$work/$side.out"
      else
        timed "$work/$side.time" "${theirs_cmd[@]}"
      fi
    done
    for side in liveline ffmpeg; do
      got=$(video_frames "$work/$side.flv")
      if [ "$got" != "$frames" ]; then echo "pipeline.sh: $side's stream has $got video frames, not $frames" >&2; exit 1; fi
    done
    if [ "$run" = 1 ]; then
      ours_options=$(x264_options "$work/liveline.flv")
      theirs_options=$(x264_options "$work/ffmpeg.flv")
      if [ -z "$ours_options" ] || [ "$ours_options" != "$theirs_options" ]; then
        printf 'pipeline.sh: the x264 settings differ\n  LiveLine: %s\n  ffmpeg:   %s\n' "$ours_options" "$theirs_options" >&2
        exit 1
      fi
      echo "  x264 settings, the same in both streams: ${ours_options#options: }"
    fi
    read -r ours_wall ours_user ours_sys <"$work/liveline.time"
    read -r theirs_wall theirs_user theirs_sys <"$work/ffmpeg.time"
    python3 - "$size" "$run" "$frames" "$ours_wall" "$ours_user" "$ours_sys" "$theirs_wall" "$theirs_user" "$theirs_sys" <<'PY' | tee -a "$summary"
import sys
size, run, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
ow, ou, os_, tw, tu, ts = map(float, sys.argv[4:])
print(f"{size}\t{run}\t{n / ow:.1f}\t{n / tw:.1f}\t{(ou + os_) / n * 1000:.2f}\t{(tu + ts) / n * 1000:.2f}"
      f"\t{(n / ow) / (n / tw):.3f}\t{(ou + os_) / (tu + ts):.3f}")
PY
  done
  own=$(sed -n 's/^RESULT .*source_ms=\([0-9.]*\).*scale_ms=\([0-9.]*\).*encode_ms=\([0-9.]*\).*/\1 \2 \3/p' <<<"$stages")
  echo "$own" >"$work/stages.$size"
done

python3 - "$summary" "$frames" "$bitrate" "$work" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
frames, bitrate, work = sys.argv[2], sys.argv[3], sys.argv[4]
print(f"\nhoster pipeline beside ffmpeg: the same {frames} frames of testsrc2 (raw .y4m), x264 veryfast zerolatency "
      f"high, keyint 60, {bitrate} kbit/s VBV, repeat headers; LiveLine adds a capture-time SEI to every frame; "
      "wall = process start to exit, CPU = user + system")
head = ["size", "pair", "LiveLine fps", "ffmpeg fps", "LiveLine CPU ms/frame", "ffmpeg CPU ms/frame", "fps ratio", "CPU ratio"]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for r in rows:
    print("| " + " | ".join(r) + " |")
for size in dict.fromkeys(r[0] for r in rows):
    mine = [r for r in rows if r[0] == size]
    fps = statistics.median(float(r[6]) for r in mine)
    cpu = statistics.median(float(r[7]) for r in mine)
    own = open(f"{work}/stages.{size}").read().split()
    share = ""
    if len(own) == 3:
        source, scale, encode = map(float, own)
        share = f"; LiveLine's own stages timed alone (test pattern + YUYV→I420) {100 * (source + scale) / encode:.1f}% of its encode"
    print(f"RATIO {size} liveline/ffmpeg: fps {fps:.2f}x, CPU {cpu:.2f}x (medians of {len(mine)} pairs){share}")
PY
echo "machine after: $(machine_note)"
