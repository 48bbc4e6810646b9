#!/usr/bin/env bash
# Builds one libFuzzer target and runs it for SECONDS.
#   Fuzz/run.sh TARGET SECONDS [extra libFuzzer options]
# TARGET: chunk | amf0 | flv | handshake | http | websocket. The LiveCore, LiveCodec, LiveNet and LiveRTMP sources
# are compiled straight into the fuzzer (coverage + AddressSanitizer) with swiftc, so
# the rest of the package need not build. Corpus and crashes go to $FUZZ_WORK
# (default /tmp/liveline-fuzz/<target>); the executions count is printed at the end.
set -euo pipefail

target=${1:?usage: Fuzz/run.sh chunk|amf0|flv|handshake|http|websocket SECONDS}
seconds=${2:?usage: Fuzz/run.sh TARGET SECONDS}
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD:-/tmp/liveline-fuzz/build}
work=${FUZZ_WORK:-/tmp/liveline-fuzz/$target}
mkdir -p "$build" "$work/corpus" "$work/artifacts"

case $target in
    chunk) main=ChunkDecoderFuzz ;;
    amf0) main=AMF0DecoderFuzz ;;
    flv) main=FLVTagFuzz ;;
    handshake) main=HandshakeFuzz ;;
    http) main=HTTPRequestParserFuzz ;;
    websocket) main=WebSocketFrameFuzz ;;
    *) echo "unknown target $target (chunk, amf0, flv, handshake, http, websocket)" >&2; exit 2 ;;
esac

flags=(-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 5 -I "$build" -I "$root/Sources/CFFmpeg")

# One module at a time, rebuilt only when a source is newer than its library.
module() {
    local name=$1; shift
    local sources=("$root/Sources/$name"/*.swift)
    local lib="$build/lib$name.a"
    if [[ ! -f $lib ]] || [[ -n $(find "$root/Sources/$name" -newer "$lib" -name '*.swift' | head -1) ]]; then
        echo "building $name" >&2
        (cd "$build" && swiftc "${flags[@]}" -module-name "$name" -emit-module -emit-module-path "$build/$name.swiftmodule" \
            -emit-library -static -o "$lib" "${sources[@]}") >"$build/$name.log" 2>&1 || { cat "$build/$name.log" >&2; exit 1; }
    fi
}
module LiveCore
module LiveCodec
module LiveNet
module LiveRTMP

binary="$build/fuzz-$target"
stale=false
for input in "$root/Fuzz/Targets/$main.swift" "$build"/libLive{Core,Codec,Net,RTMP}.a; do
    [[ $input -nt $binary ]] && stale=true
done
if [[ ! -f $binary ]] || $stale; then
    echo "linking $binary" >&2
    swiftc "${flags[@]}" -module-name "${main}" "$root/Fuzz/Targets/$main.swift" -o "$binary" \
        "$build/libLiveRTMP.a" "$build/libLiveNet.a" "$build/libLiveCodec.a" "$build/libLiveCore.a" \
        -lavcodec -lavformat -lavutil -lswscale >"$build/link-$target.log" 2>&1 || { cat "$build/link-$target.log" >&2; exit 1; }
fi

# Seeds: the hand-built fixtures the tests use live in Fuzz/Seeds/<target>.
if [[ -d $root/Fuzz/Seeds/$target ]]; then cp -n "$root/Fuzz/Seeds/$target"/* "$work/corpus/" 2>/dev/null || true; fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
"$binary" "$work/corpus" -max_total_time="$seconds" -max_len=8192 -rss_limit_mb=2048 \
    -artifact_prefix="$work/artifacts/" -print_final_stats=1 "$@" 2>&1 | tee "$work/last-run.log" | grep -E "^(#[0-9]+[[:space:]]+(DONE|INITED)|stat::number_of_executed_units|stat::peak_rss|==[0-9]+==ERROR|SUMMARY|Test unit written)" || true
grep -q "stat::number_of_executed_units" "$work/last-run.log"
