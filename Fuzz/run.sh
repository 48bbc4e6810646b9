#!/usr/bin/env bash
# Builds one libFuzzer target and runs it for SECONDS.
#   Fuzz/run.sh TARGET SECONDS [extra libFuzzer options]
# TARGET: chunk | amf0 | flv | handshake | session | token | line | call | http | websocket | members | hls. The library modules the targets use
# (LiveCore … LiveServer) are compiled straight into the fuzzer (coverage +
# AddressSanitizer) with swiftc, so the rest of the package need not build. They are
# optimised as `swift build -c release` builds the product (-O, whole module: checked,
# as shipped), and the flags are printed. Corpus and crashes go to $FUZZ_WORK
# (default /tmp/liveline-fuzz/<target>); the executions count is printed at the end.
set -euo pipefail

target=${1:?usage: Fuzz/run.sh TARGET SECONDS (TARGET: chunk|amf0|flv|handshake|session|token|line|call|http|websocket|members|hls)}
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
    session) main=RTMPServerSessionFuzz ;;
    token) main=TokenFuzz ;;
    line) main=LineRequestFuzz ;;
    call) main=CallRequestFuzz ;;
    http) main=HTTPRequestParserFuzz ;;
    websocket) main=WebSocketFrameFuzz ;;
    members) main=MemberPageFuzz ;;
    hls) main=HLSSegmenterFuzz ;;
    *) echo "unknown target $target (chunk, amf0, flv, handshake, session, token, line, call, http, websocket, members, hls)" >&2; exit 2 ;;
esac

# The optimisation of `swift build -c release` (Package.swift sets no other flags).
optimize=(-O -whole-module-optimization)
flags=(-sanitize=fuzzer,address -parse-as-library "${optimize[@]}" -g -swift-version 6 -package-name LiveLine -I "$build" -I "$root/Sources/CFFmpeg")
echo "swiftc flags: ${flags[*]}" >&2
# Rebuilt from scratch when the flags change.
if [[ $(cat "$build/flags" 2>/dev/null) != "${flags[*]}" ]]; then
    rm -f "$build"/*.a "$build"/fuzz-*
    echo "${flags[*]}" >"$build/flags"
fi

# One module at a time, rebuilt when a source is newer than its library or a module it
# imports was rebuilt.
rebuilt=
module() {
    local name=$1; shift
    local sources
    mapfile -t sources < <(find "$root/Sources/$name" -name '*.swift' | sort)
    local lib="$build/lib$name.a"
    # SwiftPM's embedInCode resources (Package.swift): the same PackageResources, made here.
    if [[ -d $root/Sources/$name/Web ]]; then
        python3 - "$root/Sources/$name/Web" "$build/$name-resources.swift" <<'PY'
import os, sys
web, out = sys.argv[1], sys.argv[2]
lines = ["struct PackageResources {"]
for name in sorted(os.listdir(web)):
    data = open(os.path.join(web, name), "rb").read()
    lines.append(f"    static let {name.replace('.', '_').replace('-', '_')}: [UInt8] = [{','.join(map(str, data))}]")
text = "\n".join(lines + ["}", ""])
if not os.path.exists(out) or open(out).read() != text:
    open(out, "w").write(text)
PY
        sources+=("$build/$name-resources.swift")
    fi
    if [[ -n $rebuilt || ! -f $lib ]] || [[ -n $(find "$root/Sources/$name" -newer "$lib" -name '*.swift' | head -1) ]] \
        || [[ -f $build/$name-resources.swift && $build/$name-resources.swift -nt $lib ]]; then
        rebuilt=yes
        echo "building $name" >&2
        (cd "$build" && swiftc "${flags[@]}" -module-name "$name" -emit-module -emit-module-path "$build/$name.swiftmodule" \
            -emit-library -static -o "$lib" "${sources[@]}") >"$build/$name.log" 2>&1 || { cat "$build/$name.log" >&2; exit 1; }
    fi
}
# In dependency order (Package.swift); every target links them all.
modules=(LiveCore LiveAuth LiveCodec LiveNet LiveRTMP LiveSignal LiveServer)
libraries=()
for name in "${modules[@]}"; do
    module "$name"
    libraries=("$build/lib$name.a" "${libraries[@]}")
done

binary="$build/fuzz-$target"
stale=
[[ -f $binary && ! $root/Fuzz/Targets/$main.swift -nt $binary ]] || stale=yes
for library in "${libraries[@]}"; do if [[ $library -nt $binary ]]; then stale=yes; fi; done
if [[ -n $stale ]]; then
    echo "linking $binary" >&2
    swiftc "${flags[@]}" -module-name "${main}" "$root/Fuzz/Targets/$main.swift" -o "$binary" "${libraries[@]}" \
        -lavcodec -lavformat -lavutil -lswscale >"$build/link-$target.log" 2>&1 || { cat "$build/link-$target.log" >&2; exit 1; }
fi

# Seeds: the hand-built fixtures the tests use live in Fuzz/Seeds/<target>.
if [[ -d $root/Fuzz/Seeds/$target ]]; then cp -n "$root/Fuzz/Seeds/$target"/* "$work/corpus/" 2>/dev/null || true; fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
"$binary" "$work/corpus" -max_total_time="$seconds" -max_len=8192 -rss_limit_mb=2048 \
    -artifact_prefix="$work/artifacts/" -print_final_stats=1 "$@" 2>&1 | tee "$work/last-run.log" | grep -E "^(#[0-9]+[[:space:]]+(DONE|INITED)|stat::number_of_executed_units|stat::peak_rss|==[0-9]+==ERROR|SUMMARY|Test unit written)" || true
grep -q "stat::number_of_executed_units" "$work/last-run.log"
