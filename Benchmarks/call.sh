#!/usr/bin/env bash
# 1v1 call setup and glass-to-glass latency on loopback: `liveline serve`, bob listening
# with --accept auto, alice calling him CALLS times one after another (each call hung up
# CALL_SECONDS after it connected), then one call of TALK_SECONDS. Both sides send the
# test pattern at 640x360, 30 fps, 800 kbit/s (liveline call's defaults), whose frames
# carry their capture time, so each side measures the peer's picture from capture to
# its own decode.
#
# Reports, from the --stats json lines of both sides:
#   call → connected       alice's setupMs: her call() to her `connected` (the callee's
#                          first frame decoded), p50/p95 over CALLS calls
#   accept → first frame   acceptToFirstFrameMs: bob's accept to the first frame he
#                          decoded of alice, and alice hearing the accept to the first of
#                          bob, p50/p95 over CALLS calls each
#   glass-to-glass         during the TALK_SECONDS call: alice → bob (bob's latency of
#                          alice's picture) and bob → alice, p50/p95 (target p95 <= 150 ms)
#
# Usage: Benchmarks/call.sh
#   CALLS=20  CALL_SECONDS=2  TALK_SECONDS=20
#   LIVELINE=path/to/liveline     use this binary instead of a release build
#   SCRATCH=/tmp/x                build elsewhere than .build
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
calls=${CALLS:-20}
call_seconds=${CALL_SECONDS:-2}
talk_seconds=${TALK_SECONDS:-20}
if [[ -n ${LIVELINE:-} ]]; then
  bin=$LIVELINE
else
  ./scripts/setup
  scratch=${SCRATCH:-.build}
  swift build -c release --scratch-path "$scratch" --product liveline >/dev/null
  bin=$scratch/release/liveline
fi
bench_workspace
machine_note

start_serve "$bin"
server=(--server "rtmp://127.0.0.1:$rtmp_port" --signal "ws://127.0.0.1:$http_port/call")

listen_cmd=("$bin" call --user bob --listen --accept auto --stats json "${server[@]}")
show "${listen_cmd[@]}"
"${listen_cmd[@]}" >"$work/bob.json" 2>"$work/bob.err" &
pids+=($!)
for _ in $(seq 100); do grep -q '"state":"prepared"' "$work/bob.json" 2>/dev/null && break; sleep 0.1; done
grep -q '"state":"prepared"' "$work/bob.json" || { cat "$work/bob.err" >&2; exit 1; }

setup_cmd=("$bin" call --user alice --to bob --calls "$calls" --duration "$call_seconds" --stats json "${server[@]}")
show "${setup_cmd[@]}"
"${setup_cmd[@]}" >"$work/alice-setup.json" 2>"$work/alice-setup.err" || { cat "$work/alice-setup.err" >&2; exit 1; }
sleep 1
bob_calls=$(grep -c '"event":"callSummary"' "$work/bob.json" || true)

talk_cmd=("$bin" call --user alice --to bob --duration "$talk_seconds" --stats json "${server[@]}")
show "${talk_cmd[@]}"
"${talk_cmd[@]}" >"$work/alice-talk.json" 2>"$work/alice-talk.err" || { cat "$work/alice-talk.err" >&2; exit 1; }
for _ in $(seq 50); do
  (( $(grep -c '"event":"callSummary"' "$work/bob.json") > bob_calls )) && break
  sleep 0.1
done

python3 - "$work/alice-setup.json" "$work/bob.json" "$work/alice-talk.json" "$calls" <<'PY'
import json, math, sys

def summaries(path):
    lines = [json.loads(l) for l in open(path) if l.startswith("{")]
    return [l for l in lines if l.get("event") == "callSummary"]

def p(values, q):  # nearest rank, as LiveLine's own percentiles
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(q / 100 * len(s)) - 1))]

def row(name, values, unit="ms"):
    values = [v for v in values if v is not None]
    if not values:
        print(f"  {name:44} no figures")
        return
    print(f"  {name:44} p50 {p(values, 50):6.1f} {unit}  p95 {p(values, 95):6.1f} {unit}  (n={len(values)})")

alice_setup, bob, alice_talk = summaries(sys.argv[1]), summaries(sys.argv[2]), summaries(sys.argv[3])
calls = int(sys.argv[4])
bob_setup, bob_talk = bob[:calls], bob[calls:]
connected = sum(1 for s in alice_setup if s["connected"])
print(f"{len(alice_setup)} calls, {connected} connected; how they ended: "
      + ", ".join(sorted({s['ended'] for s in alice_setup})))
row("call → connected (alice's setupMs)", [s["setupMs"] for s in alice_setup])
row("accept → first frame, bob's (of alice)", [s["acceptToFirstFrameMs"] for s in bob_setup])
row("accept heard → first frame, alice's (of bob)", [s["acceptToFirstFrameMs"] for s in alice_setup])
def ms(value):
    return "     —" if value is None else f"{value:6.1f}"

if alice_talk and bob_talk:
    a, b = alice_talk[-1], bob_talk[-1]
    print(f"glass-to-glass in one {a['connectedSeconds']:.0f} s call (target p95 <= 150 ms):")
    for name, s in (("alice → bob (bob decodes alice)", b), ("bob → alice (alice decodes bob)", a)):
        print(f"  {name:34} p50 {ms(s['latencyP50Ms'])} ms  p95 {ms(s['latencyP95Ms'])} ms  ({s['latencySamples']} frames)")
else:
    print("glass-to-glass: the talking call left no summary on both sides")
PY
machine_note
