#!/usr/bin/python3
"""Glass-to-glass latency of LiveLine's HLS in headless Chromium's own <video> player.

    browser-hls-latency.py http://127.0.0.1:8080/live/bench.m3u8 SECONDS [--skip S]

Capture → presented: for every frame the <video> presents, the wall-clock time Chromium
expects it on screen (requestVideoFrameCallback's metadata.expectedDisplayTime, plus
performance.timeOrigin) minus the frame's capture time (LiveLine's capture-time SEI, µs since
the Unix epoch, read by Benchmarks/lib/hls-latency.py's functions). Chromium (≥ 156) plays an
HLS playlist natively in <video> (no hls.js): the page is the server's /healthz (same origin,
no page CSP), with a muted autoplaying <video src=PLAYLIST>.

The page only knows a presented frame's media time (metadata.mediaTime), not its capture time,
so this script fetches the playlist and every segment itself meanwhile (from the window listed
when it starts onwards) and builds a table of video PTS (90 kHz) → capture time per frame.
How mediaTime maps to the TS PTS: Chromium's HLS player does not use the PTS as media time (the
PTS is the RTMP timestamp + the server's 1000 ms timeline offset, so mediaTime = PTS / 90 kHz
would be seconds off and match no frame); it starts its timeline at 0 at the first segment it
plays: mediaTime = (PTS − first PTS of that segment) / 90 kHz, where "first PTS" is the
segment's earliest PES PTS (audio or video). Which segment that was is not visible to the page,
so the script tries every fetched segment's first PTS as the origin (and PTS itself) and keeps
the one under which the presented media times land on frame PTSs and the latencies are all
positive and smallest (a later origin would give frames presented before they were captured,
an earlier one adds whole segments); the DevTools Network log (the first .ts Chromium asked
for) must agree, else the origin from the Network log wins and a note goes to stderr.

Prints one latency per presented frame in ms on stdout (one decimal), leaving out the first S
seconds after the first frame (--skip, default 2: the player's start-up), and a summary line
of JSON on stderr: {"frames", "p50", "p95", "max", "firstFrameMs", "origin", "originSegment",
"unmatched"}. Both clocks are this machine's. Runs with Debian's python3 (python3-websocket)
and the DevTools driver in Tests/Browser. Exit 0 with at least one latency, 1 when none.
"""

import argparse
import importlib.util
import json
import os
import sys
import threading
import time
import urllib.error

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Tests", "Browser"))
import cdp  # noqa: E402

_spec = importlib.util.spec_from_file_location("hls_latency", os.path.join(HERE, "hls-latency.py"))
hls = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hls)

TOLERANCE = 1500  # 90 kHz ticks (≈ 17 ms, half a frame at 30 fps) between a media time and a frame's PTS


def pes_pts(payload):
    """The PTS (90 kHz) of a PES packet's header, or None."""
    if payload[:3] != b"\x00\x00\x01" or len(payload) < 14 or not payload[7] & 0x80:
        return None
    b = payload[9:14]
    return ((b[0] >> 1) & 7) << 30 | b[1] << 22 | (b[2] >> 1) << 15 | b[3] << 7 | b[4] >> 1


def segment_frames(ts):
    """(earliest PES PTS of any stream, [(video PTS, capture µs or None), ...]) of a segment."""
    first, frames, units, current = None, [], [], {}
    for start in range(0, len(ts) - len(ts) % 188, 188):
        packet = ts[start:start + 188]
        if packet[0] != 0x47 or not packet[1] & 0x40 or not packet[3] & 0x10:
            if packet[0] == 0x47 and packet[3] & 0x10:
                pid = (packet[1] & 0x1F) << 8 | packet[2]
                if pid in current:
                    offset = 5 + packet[4] if packet[3] & 0x20 else 4
                    current[pid][1].extend(packet[offset:])
            continue
        pid = (packet[1] & 0x1F) << 8 | packet[2]
        offset = 5 + packet[4] if packet[3] & 0x20 else 4
        if offset >= 188:
            continue
        payload = packet[offset:]
        if pid in current:
            units.append(current.pop(pid))
        pts = pes_pts(payload)
        if pts is None:
            continue
        first = pts if first is None else min(first, pts)
        if payload[3] == 0xE0:
            current[pid] = (pts, bytearray(payload[9 + payload[8]:]))
    units.extend(current.values())
    for pts, data in units:
        capture = None
        for nal in hls.nal_units(data):
            capture = hls.capture_micros(nal)
            if capture is not None:
                break
        frames.append((pts, capture))
    return first, frames


class Segments(threading.Thread):
    """Polls the playlist and fetches every segment, from the window first listed on."""

    def __init__(self, url):
        super().__init__(daemon=True)
        self.url, self.stop, self.lock = url, threading.Event(), threading.Lock()
        self.order, self.first_pts, self.captures = [], {}, {}  # uri order; uri → first PTS; PTS → µs

    def run(self):
        seen = set()
        while not self.stop.is_set():
            try:
                listed = hls.segment_uris(self.url, hls.fetch(self.url).decode("utf-8", "replace"))
            except (urllib.error.URLError, OSError) as error:
                print(f"browser-hls-latency: {self.url}: {error}", file=sys.stderr)
                listed = []
            for uri in listed:
                if uri in seen:
                    continue
                try:
                    first, frames = segment_frames(hls.fetch(uri))
                except (urllib.error.URLError, OSError) as error:
                    print(f"browser-hls-latency: {uri}: {error}", file=sys.stderr)
                    continue
                seen.add(uri)
                with self.lock:
                    self.order.append(uri)
                    self.first_pts[uri] = first
                    self.captures.update((pts, us) for pts, us in frames if us is not None)
            self.stop.wait(0.1)


def lookup(captures, pts):
    """The capture µs of the frame whose PTS is nearest `pts` (within TOLERANCE), or None."""
    for delta in range(TOLERANCE + 1):
        for candidate in (pts - delta, pts + delta):
            if candidate in captures:
                return captures[candidate]
    return None


def latencies_for(origin, presented, captures):
    """Latencies (ms) of presented [mediaTime s, shown ms since epoch] under PTS = origin + mediaTime,
    and how many presented frames matched no frame."""
    out, unmatched = [], 0
    for media, shown in presented:
        capture = lookup(captures, (origin + round(media * 90000)) % (1 << 33))
        if capture is None:
            unmatched += 1
        else:
            out.append(shown - capture / 1000)
    return out, unmatched


PAGE = """(() => {
  const v = document.createElement('video');
  v.muted = true; v.autoplay = true; v.playsInline = true;
  document.body.appendChild(v);
  window.hlsBench = {presented: [], first: null, start: performance.now(), events: []};
  for (const e of ['loadedmetadata', 'playing', 'waiting', 'stalled', 'error'])
    v.addEventListener(e, () => hlsBench.events.push([e, Math.round(performance.now()), v.currentTime,
                                                      v.error && v.error.message]));
  const frame = (now, md) => {
    if (hlsBench.first === null) hlsBench.first = now - hlsBench.start;
    hlsBench.presented.push([md.mediaTime, performance.timeOrigin + md.expectedDisplayTime]);
    v.requestVideoFrameCallback(frame);
  };
  v.requestVideoFrameCallback(frame);
  v.src = %s;
  v.play().catch(e => hlsBench.events.push(['play() refused', String(e)]));
  window.hlsVideo = v;
  return v.canPlayType('application/vnd.apple.mpegurl');
})()"""


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description="Capture → presented latency of HLS in Chromium's <video>.")
    parser.add_argument("url")
    parser.add_argument("seconds", type=float)
    parser.add_argument("--skip", type=float, default=2)
    parser.add_argument("--verbose", action="store_true", help="every origin tried, on stderr")
    args = parser.parse_args()

    segments = Segments(args.url)
    segments.start()
    time.sleep(0.3)
    requested = []  # the .ts URLs Chromium asked for, in order (DevTools Network log)
    browser = cdp.start()
    handle = browser._event

    def event(message):
        if message.get("method") == "Network.requestWillBeSent":
            url = message["params"]["request"]["url"]
            if ".ts" in url.split("?")[0][-4:]:
                requested.append(url)
                if args.verbose:
                    print(f"browser-hls-latency: {time.time():.3f} Chromium requests {url}", file=sys.stderr)
        handle(message)

    browser._event = event
    presented, first_frame = [], None
    try:
        browser.call("Network.enable")
        origin_url = args.url.split("://", 1)[0] + "://" + args.url.split("://", 1)[1].split("/", 1)[0]
        browser.open(origin_url + "/healthz")
        can = browser.evaluate(PAGE % json.dumps(args.url))
        try:
            first_frame = browser.wait_for("hlsBench.first", 20)
        except TimeoutError:
            state = browser.evaluate("JSON.stringify([hlsVideo.readyState, hlsVideo.networkState, "
                                     "hlsVideo.error && hlsVideo.error.message, hlsBench.events])")
            print(f"browser-hls-latency: no frame presented in 20 s (canPlayType {can!r}; "
                  f"readyState, networkState, error, events: {state})", file=sys.stderr)
            print("\n".join(browser.console[-10:]), file=sys.stderr)
            return 1
        if args.verbose:
            print("browser-hls-latency: first presented", browser.evaluate("JSON.stringify(hlsBench.presented.slice(0, 3))"),
                  "buffered", browser.evaluate("JSON.stringify(Array.from({length: hlsVideo.buffered.length}, (_, i) => [hlsVideo.buffered.start(i), hlsVideo.buffered.end(i)]))"),
                  "at", f"{time.time():.3f}", file=sys.stderr)
        time.sleep(args.skip)
        browser.evaluate("hlsBench.presented.splice(0).length")
        deadline = time.monotonic() + args.seconds
        while time.monotonic() < deadline:
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
            presented += browser.evaluate("hlsBench.presented.splice(0)")
        time.sleep(0.5)  # the last segment the player showed is fetched here too
    except (TimeoutError, cdp.CDPError) as e:
        print(f"browser-hls-latency: {e}", file=sys.stderr)
        return 1
    finally:
        browser.close()
        segments.stop.set()
        segments.join(5)

    with segments.lock:
        captures, order, firsts = dict(segments.captures), list(segments.order), dict(segments.first_pts)
    candidates = [("PTS", None, 0)] + [("segment", uri, firsts[uri]) for uri in order if firsts[uri] is not None]
    best, tried = None, []
    for kind, uri, origin in candidates:
        values, unmatched = latencies_for(origin, presented, captures)
        ok = bool(values) and unmatched <= len(presented) // 10 and min(values) > 0
        tried.append((kind, uri, origin, len(values), unmatched, values and percentile(values, 50)))
        if ok and (best is None or percentile(values, 50) < percentile(best[3], 50)):
            best = (kind, uri, origin, values, unmatched)
    if args.verbose:
        for row in tried:
            print("browser-hls-latency: origin %s %s %s: %d matched, %d unmatched, p50 %s" % row, file=sys.stderr)
        print(f"browser-hls-latency: Chromium requested {requested[:3]}...", file=sys.stderr)
    first_requested = requested[0] if requested else None
    if first_requested in firsts and firsts[first_requested] is not None and \
            (best is None or best[1] != first_requested):
        print(f"browser-hls-latency: note: the best origin ({best and best[1]}) is not the first segment "
              f"Chromium asked for ({first_requested}); using the latter", file=sys.stderr)
        values, unmatched = latencies_for(firsts[first_requested], presented, captures)
        best = ("segment", first_requested, firsts[first_requested], values, unmatched)
    if best is None or not best[3]:
        print(f"browser-hls-latency: no presented frame matched a captured frame "
              f"({len(presented)} presented, {len(captures)} frames fetched)", file=sys.stderr)
        return 1
    kind, uri, origin, values, unmatched = best
    for value in values:
        print(f"{value:.1f}")
    print(json.dumps({"frames": len(values), "p50": round(percentile(values, 50), 1),
                      "p95": round(percentile(values, 95), 1), "max": round(max(values), 1),
                      "firstFrameMs": round(first_frame), "origin": kind, "originSegment": uri,
                      "unmatched": unmatched}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(1)
