#!/usr/bin/env bash
# Instructions executed by the release build's pixel work, this checkout against BASE
# (default d46c5ce, the last build with -Ounchecked), counted by valgrind's callgrind, so
# the figures do not depend on what else the machine runs:
#   - compositor-bench 200 frames (+10 warm-up): the whole run;
#   - liveline-bench beauty on a 10-frame 1280x720 clip (3 passes): the whole run;
#   - each filter and camera conversion alone on a 1280x720 frame, per frame (runs of 10
#     and 0 frames subtracted), from a throwaway package that compiles each tree's
#     LiveCore/LiveCodec/LiveFilter/LiveCapture with that tree's `optimize` settings.
# Prints the commands and a table: before, after, change.
#
# Usage: Benchmarks/instructions.sh [BASE]
#   BASE_TREE=DIR uses an existing checkout of BASE (built in DIR/.build) instead of a clone.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
./scripts/setup

base=${1:-d46c5ce}
here=$(pwd)
bench_workspace

base_checkout "$base"

# Instructions of one command (its output discarded).
ir() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | sed -n 's/.*I   refs: *//p' | tr -d ,; }

# The throwaway package of one tree: its filter sources, its Package.swift's settings.
loop_package() {
  local tree=$1 dir=$2
  mkdir -p "$dir/Sources/loopbench"
  for m in CFFmpeg CV4L2 LiveCore LiveCodec LiveFilter LiveCapture; do ln -s "$tree/Sources/$m" "$dir/Sources/$m"; done
  cat >"$dir/Package.swift" <<EOF
// swift-tools-version:6.0
import PackageDescription
$(grep '^let optimize' "$tree/Package.swift")
let package = Package(
    name: "loopbench",
    targets: [
        .systemLibrary(name: "CFFmpeg", path: "Sources/CFFmpeg", pkgConfig: "libavcodec"),
        .systemLibrary(name: "CV4L2", path: "Sources/CV4L2", pkgConfig: "libv4l2"),
        .target(name: "LiveCore", swiftSettings: optimize),
        .target(name: "LiveCodec", dependencies: ["CFFmpeg", "LiveCore"], swiftSettings: optimize),
        .target(name: "LiveCapture", dependencies: ["CV4L2", "LiveCore", "LiveCodec"], swiftSettings: optimize),
        .target(name: "LiveFilter", dependencies: ["LiveCore", "LiveCodec"], swiftSettings: optimize),
        .executableTarget(name: "loopbench", dependencies: ["LiveFilter", "LiveCapture"], swiftSettings: optimize),
    ],
    swiftLanguageModes: [.v5]
)
EOF
  cat >"$dir/Sources/loopbench/main.swift" <<'EOF'
import LiveCapture
import LiveCore
import LiveFilter

// loopbench NAME FRAMES: one filter or conversion on a 1280x720 frame, FRAMES times.
let name = CommandLine.arguments[1], count = Int(CommandLine.arguments[2])!
let frame = VideoFrame(width: 1280, height: 720)
for p in 0..<3 {
    for y in 0..<frame.planeHeight(p) {
        for x in 0..<frame.planeWidth(p) {
            frame.plane(p)[y * frame.stride(p) + x] = UInt8(truncatingIfNeeded: x &* 3 &+ y &* 5 &+ p &* 70)
        }
    }
}
let logo = RGBAImage(width: 320, height: 180, pixels: (0..<(320 * 180 * 4)).map { UInt8(truncatingIfNeeded: $0 &* 13) })
let packed = (0..<(1280 * 720 * 2)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
let filter: VideoFilter? = switch name {
case "watermark": WatermarkFilter(image: logo, x: 100, y: 100)
case "blur": GaussianBlurFilter(sigma: 2)
case "zoom": ZoomFilter(zoom: 1.5)
case "mirror": MirrorFilter(enabled: true)
default: nil
}
var sum = 0
for _ in 0..<count {
    if let filter {
        sum &+= Int(filter.process(frame).y[1000])
    } else {
        packed.withUnsafeBytes { raw in
            if name == "yuyv" {
                YUVConversion.yuyvToI420(raw.baseAddress!, bytesPerLine: 2560, into: frame)
            } else {
                YUVConversion.nv12ToI420(raw.baseAddress!, bytesPerLine: 1280, into: frame)
            }
        }
        sum &+= Int(frame.y[1000])
    }
}
print("\(name) \(count) frames, checksum \(sum)")
EOF
}

clip=$work/clip.y4m
ffmpeg -v error -nostdin -f lavfi -i "testsrc2=size=640x720:rate=30" \
  -f lavfi -i "color=c=0xd8a383:size=640x720:rate=30,noise=alls=16:allf=t" \
  -filter_complex hstack -frames:v 10 -pix_fmt yuv420p "$clip"

declare -A count
for side in before after; do
  tree=$([[ $side == before ]] && echo "$base_tree" || echo "$here")
  echo "== $side: $tree"
  for product in compositor-bench liveline-bench; do
    show swift build -c release --package-path "$tree" --product "$product"
    swift build -c release --package-path "$tree" --product "$product" >&2
  done
  bin=$(swift build -c release --package-path "$tree" --show-bin-path)
  loop_package "$tree" "$work/loop-$side"
  show swift build -c release --package-path "$work/loop-$side"
  swift build -c release --package-path "$work/loop-$side" >&2
  loop=$work/loop-$side/.build/release/loopbench

  show valgrind --tool=callgrind "$bin/compositor-bench" 200 10
  count[compositor,$side]=$(ir "$bin/compositor-bench" 200 10)
  show valgrind --tool=callgrind "$bin/liveline-bench" beauty "$clip" 0.6
  count[beauty,$side]=$(ir "$bin/liveline-bench" beauty "$clip" 0.6)
  for name in watermark blur zoom mirror yuyv nv12; do
    show valgrind --tool=callgrind "$loop" "$name" 10   # and with 0; per frame = difference / 10
    count[$name,$side]=$(( ($(ir "$loop" "$name" 10) - $(ir "$loop" "$name" 0)) / 10 ))
  done
done

printf '\n%-44s %15s %15s %8s\n' "instructions ($base → $(git rev-parse --short HEAD))" before after change
for row in compositor beauty watermark blur zoom mirror yuyv nv12; do
  label=$row
  case $row in
    compositor) label="compositor-bench 200 (whole run)" ;;
    beauty) label="liveline-bench beauty, 10 frames (whole run)" ;;
    *) label="$row, per 1280x720 frame" ;;
  esac
  awk -v l="$label" -v a="${count[$row,before]}" -v b="${count[$row,after]}" \
    'BEGIN { printf "%-44s %15d %15d %+7.1f%%\n", l, a, b, (b - a) * 100 / a }'
done
