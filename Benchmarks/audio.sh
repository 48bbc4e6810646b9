#!/usr/bin/env bash
# Audio benchmarks (the "Must show" list of the audio work):
#   (1) A/V sync glass to glass: `liveline host --source test` (its marker patch lit on the
#       frame of every whole second, the tone's 3 kHz beep starting at that instant) pushes
#       to the LiveLine server and to nginx-rtmp, one after the other in this run, and a
#       `liveline guest` pairs each lit frame with its beep as it presents them: avSync p50 /
#       p95 from its summary (positive = audio late). Target |p95| <= 20 ms.
#   (2) The audio path's CPU per stream: LiveLine's tone → AAC (audio-bench encode, not paced)
#       against ffmpeg's sine → aac over the same seconds of 48 kHz stereo audio at 96 kbit/s;
#       CPU time (user + sys) of each whole process, best of $RUNS, as a ratio. Target ≤ 1.2x.
#       The ratio is taken on the same signal (LiveLine's generator making lavfi sine's
#       440 Hz at 1/8 amplitude: the AAC encoder's work depends on what it encodes); the
#       test source's own tone (-12 dBFS with its 3 kHz beeps) is shown beside it.
#   (3) Mixing four 48 kHz stereo voices (audio-bench mix): µs per 10 ms block through the
#       mix-minus path (the program + one mix-minus per voice) and for the program mix alone.
#       Target ≤ 50 µs.
#   (4) Mouth-to-ear between co-hosts: a hoster (test pattern and tone, a line with
#       --accept auto) and a co-host guest on its own tone, through the LiveLine server;
#       the hoster's captureClock line gives the wall-clock time of its capture clock's
#       zero, the co-host's beepHeard lines the wall-clock time each marker beep of the
#       hoster reached its decoded (heard) audio; delay = arrival - (zero + k s), p50 / p95
#       over $M2E_SECONDS s. Target p95 ≤ 150 ms.
# Prints the commands it runs, each program's own output, then a small table.
#
# Usage: Benchmarks/audio.sh        (from anywhere)
#   AV_SECONDS=60      seconds of play per server in (1)
#   M2E_SECONDS=60     seconds of co-hosting in (4)
#   AUDIO_SECONDS=600  seconds of audio encoded by each side in (2)
#   MIX_SECONDS=60     seconds of audio mixed in (3)
#   RUNS=3             runs of each side in (2); the least CPU counts
#   SWIFT_BUILD_FLAGS="--scratch-path /tmp/x" to build elsewhere than .build.
#   CONFIG=debug       only to check the script quickly (figures from a debug build mean nothing)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
./scripts/setup

AV_SECONDS=${AV_SECONDS:-60}
M2E_SECONDS=${M2E_SECONDS:-60}
AUDIO_SECONDS=${AUDIO_SECONDS:-600}
MIX_SECONDS=${MIX_SECONDS:-60}
RUNS=${RUNS:-3}
CONFIG=${CONFIG:-release}
SWIFT_BUILD_FLAGS=${SWIFT_BUILD_FLAGS:-}

# cpu_of CMD...: runs CMD with its output on stderr; prints "total user sys", the CPU
# seconds the process (and any threads and children it had) used.
cpu_of() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys
result = subprocess.run(sys.argv[1:], stdout=sys.stderr)
if result.returncode != 0:
    sys.exit(f"{sys.argv[1]} exited with status {result.returncode}")
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{usage.ru_utime + usage.ru_stime:.4f} {usage.ru_utime:.4f} {usage.ru_stime:.4f}")
PY
}

# best_cpu CMD...: the least total CPU seconds of $RUNS runs of CMD, into $best ("total user sys").
best_cpu() {
  show "$@"
  best=""
  for _ in $(seq "$RUNS"); do
    local run
    run=$(cpu_of "$@")
    echo "  cpu total/user/sys: $run s" >&2
    if [[ -z $best ]] || awk -v a="${run%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then best=$run; fi
  done
}

echo "== build"
# shellcheck disable=SC2086
show swift build -c "$CONFIG" --product audio-bench $SWIFT_BUILD_FLAGS
# shellcheck disable=SC2086
swift build -c "$CONFIG" --product audio-bench $SWIFT_BUILD_FLAGS >&2
# shellcheck disable=SC2086
swift build -c "$CONFIG" --product liveline $SWIFT_BUILD_FLAGS >&2
# shellcheck disable=SC2086
BIN=$(swift build -c "$CONFIG" --show-bin-path $SWIFT_BUILD_FLAGS)
bench_workspace

# (1) A/V sync glass to glass through each server, the guest started first so that all it
# presents is live.
start_relays "$BIN/liveline"

av_sync() {  # name url: the guest's summary line into $work/name.summary
  local name=$1 url=$2
  local guest_cmd=("$BIN/liveline" guest "$url" --duration $((AV_SECONDS + 2)) --stats json)
  local host_cmd=("$BIN/liveline" host "$url" --source test --duration $((AV_SECONDS + 4)))
  echo "== (1) A/V sync through $name, $AV_SECONDS s"
  show "${guest_cmd[@]}"
  "${guest_cmd[@]}" >"$work/$name.guest" 2>"$work/$name.guest.err" &
  local guest_pid=$!
  sleep 1
  show "${host_cmd[@]}"
  "${host_cmd[@]}" >/dev/null 2>"$work/$name.host.err" &
  local host_pid=$!
  wait "$guest_pid" || { cat "$work/$name.guest.err" >&2; return 1; }
  wait "$host_pid" || true
  grep '"event":"summary"' "$work/$name.guest" | tail -n 1 >"$work/$name.summary"
}
av_sync liveline "rtmp://127.0.0.1:$rtmp_port/live/avsync"
av_sync nginx "rtmp://127.0.0.1:$nginx_port/live/avsync"
sync_rows=$(python3 - "$work/liveline.summary" "$work/nginx.summary" <<'PY'
import json, sys
for name, path in zip(["LiveLine server", "nginx-rtmp"], sys.argv[1:]):
    s = json.load(open(path))
    p50, p95, n = s.get("avSyncP50Ms"), s.get("avSyncP95Ms"), s.get("avSyncSamples") or 0
    result = "no pairs" if p50 is None else f"{p50:+.1f} / {p95:+.1f} ms ({n} pairs)"
    verdict = "" if p95 is None else ("met" if abs(p95) <= 20 else "NOT met")
    print(f"{'    through ' + name:52} {result:22} {verdict}")
PY
)

echo "== (4) mouth-to-ear, hoster -> LiveLine server -> co-host, $M2E_SECONDS s"
m2e_url="rtmp://127.0.0.1:$rtmp_port/live/m2e"
host_cmd=("$BIN/liveline" host "$m2e_url" --source test --size 640x360 --line m2e --accept auto --stats json
          --duration $((M2E_SECONDS + 8)))
cohost_cmd=("$BIN/liveline" guest "$m2e_url" --apply --source color:blue --size 320x180 --audio-source tone:1100
            --stats json --duration $((M2E_SECONDS + 4)))
show "${host_cmd[@]}"
"${host_cmd[@]}" </dev/null >"$work/m2e.host" 2>"$work/m2e.host.err" &
m2e_host=$!
sleep 2
show "${cohost_cmd[@]}"
"${cohost_cmd[@]}" </dev/null >"$work/m2e.cohost" 2>"$work/m2e.cohost.err" || { cat "$work/m2e.cohost.err" >&2; exit 1; }
kill -INT "$m2e_host" 2>/dev/null || true
wait "$m2e_host" || true
m2e_row=$(python3 - "$work/m2e.host" "$work/m2e.cohost" <<'PY'
import json, sys
def lines(path):
    for line in open(path):
        try:
            yield json.loads(line)
        except ValueError:
            pass
zero = next((l["zeroWallMicros"] for l in lines(sys.argv[1]) if l.get("event") == "captureClock"), None)
beeps = [l["wallMicros"] for l in lines(sys.argv[2]) if l.get("event") == "beepHeard"]
if zero is None or not beeps:
    print(f"{'(4) mouth-to-ear hoster -> co-host, p50 / p95':52} {'no beeps heard':22}")
    sys.exit()
# Beeps are a second apart: each arrival's delay past the last whole second of the hoster's clock.
delays = sorted(((b - zero) % 1_000_000) / 1000 for b in beeps[2:] or beeps)
p = lambda q: delays[min(len(delays) - 1, int(q * len(delays)))]
verdict = "met" if p(0.95) <= 150 else "NOT met"
print(f"{'(4) mouth-to-ear hoster -> co-host, p50 / p95':52} {f'{p(0.5):.0f} / {p(0.95):.0f} ms ({len(delays)} beeps)':22} <= 150 ms: {verdict}")
PY
)

echo "== (2) LiveLine: tone → AAC, $AUDIO_SECONDS s of 48 kHz stereo audio, as fast as it goes"
best_cpu "$BIN/audio-bench" encode --seconds "$AUDIO_SECONDS" --bitrate 96 --signal sine
ours_cpu=$best
best_cpu "$BIN/audio-bench" encode --seconds "$AUDIO_SECONDS" --bitrate 96 --signal test
test_cpu=$best
echo "== (2) ffmpeg: sine → aac, the same audio"
best_cpu ffmpeg -hide_banner -nostats -loglevel error -f lavfi -i sine=frequency=440:sample_rate=48000 -ac 2 \
  -t "$AUDIO_SECONDS" -c:a aac -b:a 96k -f null -
ffmpeg_cpu=$best

echo "== (3) mixing four 48 kHz stereo voices"
show "$BIN/audio-bench" mix --voices 4 --seconds "$MIX_SECONDS"
mix_out=$("$BIN/audio-bench" mix --voices 4 --seconds "$MIX_SECONDS")
echo "$mix_out"
minus_us=$(sed -n 's/^RESULT mixminus_us_per_block=//p' <<<"$mix_out")
program_us=$(sed -n 's/^RESULT program_us_per_block=//p' <<<"$mix_out")

awk -v ours="${ours_cpu%% *}" -v test="${test_cpu%% *}" -v ff="${ffmpeg_cpu%% *}" -v secs="$AUDIO_SECONDS" -v minus="$minus_us" \
    -v program="$program_us" -v config="$CONFIG" -v sync_rows="$sync_rows" 'BEGIN {
    ratio = ours / ff
    printf "\n%-52s %-22s %s\n", "audio benchmark (" config " build)", "result", "target"
    printf "%-52s %-22s %s\n", "(1) A/V sync glass to glass, p50 / p95", "", "|p95| <= 20 ms"
    print sync_rows
    printf "%-52s %-22s %s\n", "(2) CPU per stream, LiveLine / ffmpeg", sprintf("%.2fx", ratio),
           "<= 1.2x: " (ratio <= 1.2 ? "met" : "NOT met")
    printf "%-52s %-22s\n", sprintf("    LiveLine sine -> AAC, %d s of audio", secs), sprintf("%.3f s CPU", ours)
    printf "%-52s %-22s\n", sprintf("    LiveLine test tone + beeps -> AAC, %d s", secs), sprintf("%.3f s CPU (%.2fx)", test, test / ff)
    printf "%-52s %-22s\n", sprintf("    ffmpeg sine -> aac, %d s of audio", secs), sprintf("%.3f s CPU", ff)
    printf "%-52s %-22s %s\n", "(3) 4 voices, program + 4 mix-minus, per 10 ms", sprintf("%.2f us", minus),
           "<= 50 us: " (minus <= 50 ? "met" : "NOT met")
    printf "%-52s %-22s\n", "    program mix alone, per 10 ms", sprintf("%.2f us", program)
}'
echo "$m2e_row"
