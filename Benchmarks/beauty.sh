#!/usr/bin/env bash
# Beauty filter beside ffmpeg's smoothing filters, on the same frames, one thread each
# (DESIGN.md §7: ≤ 2 ms per 720p frame, ≥ 3x faster than the ffmpeg filter).
# The clip: 120 frames of 1280x720, half testsrc2 (edges, text, colour bars), half a
# noisy skin tone, the part a beauty filter smooths.
#
# Both sides are timed the same way: a process that goes PASSES times over the clip's
# frames with the filter, its CPU (user + system, getrusage, `timed` in common.sh) minus
# that of the same process without the filter, divided by the frames filtered; each the
# lowest of RUNS runs.
#   LiveLine  liveline-bench beauty CLIP STRENGTH PASSES (decodes the clip once, then
#             filters fresh copies; baseline: the same with `none`)
#   ffmpeg    ffmpeg -threads 1 -filter_threads 1 -stream_loop PASSES-1 -i CLIP -vf FILTER
#             -f null - (baseline: the same without -vf)
#   SCRATCH=.build  build directory   STRENGTH=0.6  beauty strength   PASSES=5   RUNS=3
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
./scripts/setup
scratch=${SCRATCH:-.build}
strength=${STRENGTH:-0.6}
passes=${PASSES:-5}
runs=${RUNS:-3}
swift build -c release --scratch-path "$scratch" --product liveline-bench >/dev/null
bench_workspace
echo "machine: $(machine_note)"
clip=$work/clip.y4m
frames=120
ffmpeg -v error -nostdin -f lavfi -i "testsrc2=size=640x720:rate=30" \
  -f lavfi -i "color=c=0xd8a383:size=640x720:rate=30,noise=alls=16:allf=t" \
  -filter_complex hstack -frames:v $frames -pix_fmt yuv420p "$clip"

# CPU seconds (user + system) of the lowest of RUNS runs of a command.
best_cpu() {
  local b="" t wall user sys
  for _ in $(seq "$runs"); do
    timed "$work/time" "$@" >/dev/null
    read -r wall user sys <"$work/time"
    t=$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')
    if [ -z "$b" ] || awk -v a="$t" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$t; fi
  done
  echo "$b"
}
# ms per filtered frame from the CPU seconds with and without the filter.
per_frame() { awk -v t="$1" -v b="$2" -v n=$((frames * passes)) 'BEGIN { printf "%.3f", (t - b) * 1000 / n }'; }

bench=("$scratch/release/liveline-bench" beauty "$clip")
show "${bench[@]}" "$strength" "$passes"
ours=$(per_frame "$(best_cpu "${bench[@]}" "$strength" "$passes")" "$(best_cpu "${bench[@]}" none "$passes")")
ffmpeg_run=(ffmpeg -nostdin -v error -threads 1 -filter_threads 1 -stream_loop $((passes - 1)) -i "$clip")
base=$(best_cpu "${ffmpeg_run[@]}" -f null -)
printf "  %-42s %8.3f ms/frame\n" "LiveLine BeautyFilter ($strength)" "$ours"
for filter in "smartblur=luma_radius=2:luma_strength=1" "bilateral=sigmaS=4:sigmaR=0.1"; do
  show "${ffmpeg_run[@]}" -vf "$filter" -f null -
  ms=$(per_frame "$(best_cpu "${ffmpeg_run[@]}" -vf "$filter" -f null -)" "$base")
  printf "  %-42s %8.3f ms/frame   RATIO ffmpeg/liveline = %.2fx\n" "ffmpeg $filter" "$ms" \
    "$(awk -v a="$ms" -v b="$ours" 'BEGIN { print a / b }')"
done
echo "  (each: CPU seconds with the filter minus without, over $((frames * passes)) filtered frames, lowest of $runs runs)"
echo "machine after: $(machine_note)"
