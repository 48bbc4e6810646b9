#!/usr/bin/env python3
"""Capture → HLS latency of a LiveLine stream: how long after a frame was captured its
HLS segment was listed in the playlist (the earliest a player could fetch it).

    hls-latency.py http://127.0.0.1:8080/live/cam.m3u8 30 > hls-ms.txt

Polls the playlist (URL, argument 1; a ?token= query is kept) every 50 ms for SECONDS
(argument 2). Each segment that appears after the first poll is noted with the wall
clock of the poll that first listed it, then fetched; the capture time of each of its
video frames is read from LiveLine's capture-time SEI (Sources/LiveCodec/CaptureTimeSEI.swift:
an H.264 SEI, user data unregistered, LiveLine's UUID, then 8 bytes big-endian
microseconds since the Unix epoch; Benchmarks/lib/flv-capture-sei.py writes the same
SEI into an ffmpeg push). Prints one line per frame: listed − captured, in ms (one
decimal), on stdout as it goes; a summary (segments, frames, p50, p95) on stderr at the
end. The first frame of a segment waits longest (a whole segment), its last the least.
Both clocks are this machine's wall clock: run it where the host captures, or on
machines whose clocks agree.

Exit status: 0 with at least one latency, 1 when none was measured (no new segment, or
frames without the SEI), 2 for bad arguments.
"""
import struct
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

UUID = bytes([0xF1, 0x73, 0xCD, 0x41, 0x1E, 0x02, 0x42, 0xEF, 0xBC, 0x30, 0x4F, 0x52, 0x6D, 0xE4, 0x12, 0xAF])
POLL_SECONDS = 0.05


def fetch(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read()


def segment_uris(playlist_url, text):
    """The playlist's segment URLs, absolute, in order."""
    return [urllib.parse.urljoin(playlist_url, line.strip()) for line in text.splitlines()
            if line.strip() and not line.startswith("#")]


def video_access_units(ts):
    """The payloads of the H.264 PES packets (stream id 0xE0) of an MPEG-TS segment."""
    units, current = [], {}
    for start in range(0, len(ts) - len(ts) % 188, 188):
        packet = ts[start:start + 188]
        if packet[0] != 0x47:
            continue
        pid = (packet[1] & 0x1F) << 8 | packet[2]
        offset = 4
        if packet[3] & 0x20:
            offset = 5 + packet[4]
        if not packet[3] & 0x10 or offset >= 188:
            continue
        payload = packet[offset:]
        if packet[1] & 0x40:
            if pid in current:
                units.append(current.pop(pid))
            if payload[:3] == b"\x00\x00\x01" and payload[3] == 0xE0:
                current[pid] = bytearray(payload[9 + payload[8]:])
        elif pid in current:
            current[pid] += payload
    units.extend(current.values())
    return units


def nal_units(annex_b):
    """The NAL units (header byte first) of Annex B bytes."""
    starts, index = [], 0
    while True:
        index = annex_b.find(b"\x00\x00\x01", index)
        if index < 0:
            break
        starts.append(index + 3)
        index += 3
    for number, begin in enumerate(starts):
        end = starts[number + 1] - 3 if number + 1 < len(starts) else len(annex_b)
        yield bytes(annex_b[begin:end]).rstrip(b"\x00")


def capture_micros(nal):
    """LiveLine's capture time in an SEI NAL unit, or None (as CaptureTimeSEI.parse)."""
    if not nal or nal[0] & 0x1F != 6:
        return None
    rbsp, zeros = bytearray(), 0
    for byte in nal[1:]:
        if zeros >= 2 and byte == 3:
            zeros = 0
            continue
        rbsp.append(byte)
        zeros = zeros + 1 if byte == 0 else 0
    index = 0

    def number():
        nonlocal index
        value = 0
        while index < len(rbsp) and rbsp[index] == 0xFF:
            value += 255
            index += 1
        if index >= len(rbsp):
            return None
        value += rbsp[index]
        index += 1
        return value

    while index < len(rbsp) and rbsp[index] != 0x80:
        kind, size = number(), number()
        if kind is None or size is None or index + size > len(rbsp):
            return None
        if kind == 5 and size >= 24 and rbsp[index:index + 16] == UUID:
            return struct.unpack(">Q", bytes(rbsp[index + 16:index + 24]))[0]
        index += size
    return None


def segment_captures(ts):
    """The capture time (µs) of each video frame of a segment that carries one."""
    times = []
    for unit in video_access_units(ts):
        for nal in nal_units(unit):
            micros = capture_micros(nal)
            if micros is not None:
                times.append(micros)
                break
    return times


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main():
    if len(sys.argv) != 3:
        print("usage: hls-latency.py PLAYLIST_URL SECONDS  (prints capture → listed latencies in ms, one a line)",
              file=sys.stderr)
        sys.exit(2)
    url = sys.argv[1]
    try:
        seconds = float(sys.argv[2])
    except ValueError:
        print(f"hls-latency.py: SECONDS must be a number, not '{sys.argv[2]}'", file=sys.stderr)
        sys.exit(2)
    seen, latencies, segments = None, [], 0
    deadline = time.time() + seconds
    while time.time() < deadline:
        polled = time.time()
        try:
            listed = segment_uris(url, fetch(url).decode("utf-8", "replace"))
        except (urllib.error.URLError, OSError) as error:
            print(f"hls-latency.py: {url}: {error}", file=sys.stderr)
            time.sleep(POLL_SECONDS)
            continue
        if seen is None:
            seen = set(listed)  # listed before we looked: when is unknown
        for uri in listed:
            if uri in seen:
                continue
            seen.add(uri)
            try:
                captures = segment_captures(fetch(uri))
            except (urllib.error.URLError, OSError) as error:
                print(f"hls-latency.py: {uri}: {error}", file=sys.stderr)
                continue
            segments += 1
            for micros in captures:
                latency = (polled * 1_000_000 - micros) / 1000
                latencies.append(latency)
                print(f"{latency:.1f}", flush=True)
        time.sleep(max(0.0, POLL_SECONDS - (time.time() - polled)))
    if not latencies:
        print(f"hls-latency.py: no latency measured in {seconds:g} s ({segments} new segments)", file=sys.stderr)
        sys.exit(1)
    print(f"hls-latency.py: {segments} segments, {len(latencies)} frames, p50 {percentile(latencies, 0.5):.0f} ms, "
          f"p95 {percentile(latencies, 0.95):.0f} ms", file=sys.stderr)


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
