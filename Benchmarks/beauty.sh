#!/usr/bin/env bash
# Beauty filter beside ffmpeg's smoothing filters, on the same frames, one core each
# (DESIGN.md §6: ≤ 2 ms per 720p frame, ≥ 3x faster than the ffmpeg filter).
# The clip: 120 frames of 1280x720, half testsrc2 (edges, text, colour bars), half a
# noisy skin tone, the part a beauty filter smooths. LiveLine's BeautyFilter is timed on
# the decoded frames (liveline-bench beauty); each ffmpeg filter is timed as its run's
# user CPU (-benchmark, one thread) minus that of the same run without the filter.
#   SCRATCH=.build  build directory     STRENGTH=0.6  beauty strength
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
./scripts/setup
scratch=${SCRATCH:-.build}
strength=${STRENGTH:-0.6}
swift build -c release --scratch-path "$scratch" --product liveline-bench >/dev/null
bench_workspace
clip=$work/clip.y4m
frames=120
ffmpeg -v error -nostdin -f lavfi -i "testsrc2=size=640x720:rate=30" \
  -f lavfi -i "color=c=0xd8a383:size=640x720:rate=30,noise=alls=16:allf=t" \
  -filter_complex hstack -frames:v $frames -pix_fmt yuv420p "$clip"

ours=$("$scratch/release/liveline-bench" beauty "$clip" "$strength" | tee /dev/stderr | sed -n 's/^RESULT beauty_ms=\([0-9.]*\).*/\1/p')

# User CPU seconds of one single-threaded ffmpeg pass over the clip, with extra args.
utime() {
  ffmpeg -nostdin -hide_banner -benchmark -threads 1 -filter_threads 1 -i "$clip" "$@" -f null - 2>&1 |
    sed -n 's/^bench: utime=\([0-9.]*\)s.*/\1/p'
}
best() {  # the lowest of three runs
  local b="" t
  for _ in 1 2 3; do
    t=$(utime "$@")
    if [ -z "$b" ] || awk -v a="$t" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$t; fi
  done
  echo "$b"
}
base=$(best)
printf "  %-42s %8.3f ms/frame\n" "LiveLine BeautyFilter ($strength)" "$ours"
for filter in "smartblur=luma_radius=2:luma_strength=1" "bilateral=sigmaS=4:sigmaR=0.1"; do
  t=$(best -vf "$filter")
  ms=$(awk -v t="$t" -v b="$base" -v n=$frames 'BEGIN { printf "%.3f", (t - b) * 1000 / n }')
  printf "  %-42s %8.3f ms/frame   RATIO ffmpeg/liveline = %.2fx\n" "ffmpeg $filter" "$ms" \
    "$(awk -v a="$ms" -v b="$ours" 'BEGIN { print a / b }')"
done
