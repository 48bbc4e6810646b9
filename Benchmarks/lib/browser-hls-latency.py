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

How mediaTime maps to the TS PTS (measured with Chromium 156 and `liveline serve`):
  - mediaTime is not PTS / 90 kHz (the RTMP timestamp + the server's 1000 ms timeline
    offset): read that way, on a stream running for minutes no presented frame matches a
    fetched one, and on a young one the latencies are off by whole segments and vary.
  - Chromium's HLS player starts its media timeline at 0 at the first segment it plays:
    mediaTime = (PTS − first PTS of that segment) / 90 kHz, to the millisecond (the segment's
    earliest PES PTS, which is its first video frame, a keyframe: audio starts no earlier).
  - Which segment that was the page cannot see. Chromium first requests one segment of the
    window as a probe (116 of 115–120), then, with it, the one it plays from, 3 segments
    before the live edge (119), then the next ones (120, 121, then one a second). The origin
    is taken from the buffered range, sampled every second: Chromium holds the segments from
    the origin to the last one it requested, from media time 0 on (right after the first
    frame, 1 s segments: [0, 2.8], three segments), so the origin is the segment whose first
    PTS is the buffered end before the first PTS of the segment after the last requested (the
    most frequent over the samples: "originSegment"). The start of the last
    run of consecutive requests is reported beside it ("originByRequests", a note on stderr
    when they differ): it is the same unless the probe happens to be the segment just before
    (on a short window: 0 probed, 1, 2, 3 played). Checked: with a later origin, frames
    would be shown before Chromium asked for their segment ("shownBeforeRequested", a
    warning if not 0); an earlier one only adds whole seconds. --verbose tries every origin.
  - Chromium does not catch up to the live edge: the latency stays the same throughout (p50
    ≈ p95): about 3 segments + the time to finish and list one.

The <video> joins once the playlist lists at least 4 segments (so the figure does not depend on
whether this script's first request started the server's segmenting, after 30 s without
requests): joining a playlist of 1 segment, Chromium 156 often fails
(DEMUXER_ERROR_COULD_NOT_PARSE on a well-formed segment) or stalls after its second segment.
A <video> that errors before its first frame is replaced, up to 3 times. The browser cache
is off, so that every segment Chromium loads shows in the Network log.

Prints one latency per presented frame in ms on stdout (one decimal), leaving out the first S
seconds after the first frame (--skip, default 2: the player's start-up), and a summary line
of JSON on stderr: {"frames", "p50", "p95", "max", "firstFrameMs" (<video> src set → first frame
presented), "originSegment", "originByRequests", "shownBeforeRequested", "unmatched" (presented frames with no
fetched frame at their PTS)}. Both clocks are this machine's. Runs with Debian's python3 (python3-websocket)
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

sys.dont_write_bytecode = True  # importing hls-latency.py leaves no __pycache__ in Benchmarks/lib
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Tests", "Browser"))
import cdp  # noqa: E402

_spec = importlib.util.spec_from_file_location("hls_latency", os.path.join(HERE, "hls-latency.py"))
hls = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hls)

JOIN_SEGMENTS, JOIN_WAIT = 4, 15  # the <video> joins once the playlist lists 4 segments (waiting at most 15 s)
ATTEMPTS = 3  # <video> elements tried, one after another, until one presents a frame
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
        self.segment_of = {}  # PTS → uri
        self.listed = 0  # segments in the playlist when last polled

    def run(self):
        seen = set()
        while not self.stop.is_set():
            try:
                listed = hls.segment_uris(self.url, hls.fetch(self.url).decode("utf-8", "replace"))
            except (urllib.error.URLError, OSError) as error:
                print(f"browser-hls-latency: {self.url}: {error}", file=sys.stderr)
                listed = []
            self.listed = len(listed)
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
                    self.segment_of.update((pts, uri) for pts, _ in frames)
            self.stop.wait(0.1)


def nearest(table, pts):
    """The PTS in `table` nearest `pts` (within TOLERANCE), or None."""
    for delta in range(TOLERANCE + 1):
        for candidate in (pts - delta, pts + delta):
            if candidate in table:
                return candidate
    return None


def latencies_for(origin, presented, captures):
    """Latencies (ms) of presented [mediaTime s, shown ms since epoch] under PTS = origin + mediaTime,
    and how many presented frames matched no frame."""
    out, unmatched = [], 0
    for media, shown in presented:
        pts = nearest(captures, (origin + round(media * 90000)) % (1 << 33))
        if pts is None:
            unmatched += 1
        else:
            out.append(shown - captures[pts] / 1000)
    return out, unmatched


def shown_before_requested(origin, presented, segment_of, requested_at):
    """How many presented frames would, under PTS = origin + mediaTime, have been shown before
    Chromium asked for their segment (impossible: the origin would be wrong)."""
    count = 0
    for media, shown in presented:
        pts = nearest(segment_of, (origin + round(media * 90000)) % (1 << 33))
        asked = requested_at.get(segment_of[pts]) if pts is not None else None
        if asked is not None and shown < asked * 1000:
            count += 1
    return count


PAGE = """(() => {
  if (window.hlsVideo) { hlsVideo.removeAttribute('src'); hlsVideo.load(); hlsVideo.remove(); }
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


def playback_start(requested, order):
    """The first of the run of consecutive segments Chromium requested last, or None: its media
    time 0 when its first request, a probe, was not the segment just before (83, 86, 87, ... →
    86; 0, 0, 1, ... → 0; but 0, 1, 2, ... is 0 probed, 1 played: see buffer_origins)."""
    index = {uri: number for number, uri in enumerate(order)}
    numbers = [index[uri] for uri in requested if uri in index]
    if not numbers:
        return None
    start = len(numbers) - 1
    while start > 0 and numbers[start - 1] in (numbers[start], numbers[start] - 1):
        start -= 1
    return order[numbers[start]]


def buffer_origins(buffered, requested_at, order, firsts):
    """Origins (indices in `order`) implied by each buffered sample: Chromium holds the segments
    from the origin to the last it requested before the sample, from media time 0 on, so the
    buffered end is about (first PTS of the segment after the last − first PTS of the origin)
    / 90 kHz; the origin is the segment that makes it nearest (within 0.6 s)."""
    index = {uri: number for number, uri in enumerate(order)}
    out = []
    for wall, ranges in buffered:
        asked = [index[u] for u, t in requested_at.items() if u in index and t < wall - 0.2]
        if not asked or not ranges or max(asked) + 1 >= len(order):
            continue
        end = firsts.get(order[max(asked) + 1])
        if end is None:
            continue
        error, origin = min((abs(((end - firsts[order[o]]) % (1 << 33)) / 90000 - ranges[-1][1]), o)
                            for o in range(max(asked) + 1) if firsts.get(order[o]) is not None)
        if error < 0.6:
            out.append(origin)
    return out


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
    deadline = time.monotonic() + JOIN_WAIT
    while segments.listed < JOIN_SEGMENTS and time.monotonic() < deadline:
        time.sleep(0.1)
    requested, requested_at = [], {}  # the .ts URLs Chromium asked for, in order; url → first wall time
    try:
        browser = cdp.start()
    except cdp.CDPError as e:
        print(f"browser-hls-latency: {e}", file=sys.stderr)
        segments.stop.set()
        return 1
    handle = browser._event

    def event(message):
        if message.get("method") == "Network.requestWillBeSent":
            url = message["params"]["request"]["url"]
            if ".ts" in url.split("?")[0][-4:]:
                requested.append(url)
                requested_at.setdefault(url, message["params"].get("wallTime", 0))
                if args.verbose:
                    print(f"browser-hls-latency: {time.time():.3f} Chromium requests {url}", file=sys.stderr)
        handle(message)

    browser._event = event
    presented, first_frame, buffered = [], None, []  # buffered: (wall s, [[start, end] media s, ...])
    try:
        browser.call("Network.enable")
        browser.call("Network.setCacheDisabled", {"cacheDisabled": True})  # every segment in the log
        origin_url = args.url.split("://", 1)[0] + "://" + args.url.split("://", 1)[1].split("/", 1)[0]
        browser.open(origin_url + "/healthz")
        for attempt in range(1, ATTEMPTS + 1):
            del requested[:]
            requested_at.clear()
            can = browser.evaluate(PAGE % json.dumps(args.url))
            try:
                outcome = browser.wait_for("hlsBench.first !== null ? 'frame' : hlsVideo.error ? 'error' : null", 20)
            except TimeoutError:
                outcome = "timeout"
            state = browser.evaluate("JSON.stringify([hlsVideo.readyState, hlsVideo.networkState, "
                                     "hlsVideo.error && hlsVideo.error.message, hlsBench.events])")
            if outcome == "frame":
                break
            # Seen on a cold join (the server's segmenting just started, one segment listed):
            # DEMUXER_ERROR_COULD_NOT_PARSE on a well-formed first segment, now and then.
            print(f"browser-hls-latency: attempt {attempt}: no frame presented ({outcome}; canPlayType {can!r}; "
                  f"readyState, networkState, error, events: {state})", file=sys.stderr)
            if attempt == ATTEMPTS:
                print("\n".join(browser.console[-10:]), file=sys.stderr)
                return 1
            time.sleep(1)
        first_frame = browser.evaluate("hlsBench.first")
        if args.verbose:
            print("browser-hls-latency: first presented", browser.evaluate("JSON.stringify(hlsBench.presented.slice(0, 3))"),
                  "buffered", browser.evaluate("JSON.stringify(Array.from({length: hlsVideo.buffered.length}, (_, i) => [hlsVideo.buffered.start(i), hlsVideo.buffered.end(i)]))"),
                  "at", f"{time.time():.3f}", file=sys.stderr)
        time.sleep(args.skip)
        browser.evaluate("hlsBench.presented.splice(0).length")
        deadline = time.monotonic() + args.seconds
        while time.monotonic() < deadline:
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
            got, ranges = browser.evaluate("[hlsBench.presented.splice(0), Array.from({length: hlsVideo.buffered.length},"
                                           " (_, i) => [hlsVideo.buffered.start(i), hlsVideo.buffered.end(i)])]")
            presented += got
            buffered.append((time.time(), ranges))
        final_state = browser.evaluate("JSON.stringify([hlsVideo.readyState, hlsVideo.networkState, "
                                       "hlsVideo.currentTime, hlsVideo.error && hlsVideo.error.message, "
                                       "hlsBench.events.slice(-5)])")
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
        segment_of = dict(segments.segment_of)
    by_requests = playback_start(requested, order)
    by_buffer = buffer_origins(buffered, requested_at, order, firsts)
    if args.verbose:
        print(f"browser-hls-latency: buffered {buffered[:2]}…{buffered[-1:]}; origins by buffer "
              f"{[order[i].rsplit('/', 1)[-1] for i in by_buffer if 0 <= i < len(order)]}", file=sys.stderr)
    by_buffer = [i for i in by_buffer if 0 <= i < len(order)]
    origin_uri = order[max(set(by_buffer), key=by_buffer.count)] if by_buffer else by_requests
    if origin_uri != by_requests:
        print(f"browser-hls-latency: note: the buffered range puts media time 0 at {origin_uri}, the requests at "
              f"{by_requests}; using the former", file=sys.stderr)
    if args.verbose:
        for uri in order:
            if firsts[uri] is not None:
                values, unmatched = latencies_for(firsts[uri], presented, captures)
                early = shown_before_requested(firsts[uri], presented, segment_of, requested_at)
                print(f"browser-hls-latency: origin {uri}: {len(values)} matched, {unmatched} unmatched, "
                      f"{early} shown before requested, p50 {values and round(percentile(values, 50), 1)}",
                      file=sys.stderr)
        values, unmatched = latencies_for(0, presented, captures)
        print(f"browser-hls-latency: mediaTime = PTS: {len(values)} matched, {unmatched} unmatched", file=sys.stderr)
    if not presented:
        print(f"browser-hls-latency: no frame presented after the first ({final_state}; Chromium requested "
              f"{[u.rsplit('/', 1)[-1] for u in requested]})", file=sys.stderr)
        return 1
    if origin_uri is None or firsts.get(origin_uri) is None:
        print(f"browser-hls-latency: cannot tell which segment Chromium started playing with "
              f"(it requested {requested[:4]}, this script fetched {order[:1]}…{order[-1:]})", file=sys.stderr)
        return 1
    values, unmatched = latencies_for(firsts[origin_uri], presented, captures)
    if not values:
        print(f"browser-hls-latency: no presented frame matched a captured frame "
              f"({len(presented)} presented, {len(captures)} frames fetched)", file=sys.stderr)
        return 1
    early = shown_before_requested(firsts[origin_uri], presented, segment_of, requested_at)
    if unmatched > len(presented) // 10 or min(values) <= 0 or early:
        print(f"browser-hls-latency: warning: with mediaTime 0 at {origin_uri}, {unmatched} of {len(presented)} "
              f"presented frames match no frame, {early} were shown before Chromium requested their segment, "
              f"and the least latency is {min(values):.0f} ms", file=sys.stderr)
    for value in values:
        print(f"{value:.1f}")
    print(json.dumps({"frames": len(values), "p50": round(percentile(values, 50), 1),
                      "p95": round(percentile(values, 95), 1), "max": round(max(values), 1),
                      "firstFrameMs": round(first_frame), "originSegment": origin_uri,
                      "originByRequests": by_requests,
                      "shownBeforeRequested": early,
                      "unmatched": unmatched}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(1)
