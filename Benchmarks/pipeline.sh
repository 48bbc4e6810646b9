#!/usr/bin/env bash
# Hoster pipeline throughput beside ffmpeg, same machine, same run (DESIGN.md §6).
# For 720p and 1080p: LiveLine's per-stage costs and pipeline fps (test source → x264
# veryfast zerolatency 2500k, 600 frames), then ffmpeg doing the same job, and the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup
scratch=${SCRATCH:-.build}
swift build -c release --scratch-path "$scratch" --product liveline-bench >/dev/null
bench=$scratch/release/liveline-bench
frames=${FRAMES:-600}

now() { date +%s.%N; }
for size in 1280x720 1920x1080; do
  echo "== $size =="
  ours=$($bench "$size" "$frames" | tee /dev/stderr | sed -n 's/^RESULT fps=\([0-9.]*\).*/\1/p')
  cmd=(ffmpeg -v error -nostdin -f lavfi -i "testsrc2=size=$size:rate=30" -frames:v "$frames"
       -c:v libx264 -preset veryfast -tune zerolatency -b:v 2500k -f null -)
  echo "  running: ${cmd[*]}"
  t0=$(now); "${cmd[@]}"; t1=$(now)
  theirs=$(awk -v n="$frames" -v a="$t0" -v b="$t1" 'BEGIN { print n / (b - a) }')
  printf "  %-30s%8.1f fps\n" "ffmpeg same job" "$theirs"
  awk -v s="$size" -v a="$ours" -v b="$theirs" 'BEGIN { printf "  RATIO %s liveline/ffmpeg = %.2fx\n", s, a / b }'
done
