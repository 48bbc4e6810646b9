#!/usr/bin/env python3
"""Gives an ffmpeg push the capture-time SEI every LiveLine frame carries, so a LiveLine
guest measures its glass-to-glass latency the way it measures LiveLine's own.

    ffmpeg … -vf "realtime=limit=3600,settb=1/1000,setpts=PTS+(RTCSTART-$T0)/1000/1000/TB" … -f flv - |
        flv-capture-sei.py T0 | ffmpeg -f flv -i - -c copy -f flv rtmp://…

Reads FLV on stdin and writes it to stdout, tag by tag (flushed at once), with one SEI
NAL unit put before the first slice of every H.264 access unit: the user-data-
unregistered message of Sources/LiveCodec/CaptureTimeSEI.swift (LiveLine's UUID, then
the capture time as 8 bytes big-endian microseconds since the Unix epoch).

The capture time is T0 (microseconds since the epoch, argument 1) plus the frame's
presentation time in ms. The setpts filter above makes that presentation time the wall
clock of the frame's capture: ffmpeg's wall clock when the filter graph started (its
RTCSTART, read just before the realtime filter releases the first frame) minus T0, plus
the frame's place in the stream. The realtime filter releases frame N at start + N/fps,
as a camera would, and when the push falls behind (a blocked socket), the frames still
belong to the time they were captured: a backlog shows as latency, as with a camera.
Nothing else in the stream changes; the audio tags pass as they are.
"""
import struct
import sys

UUID = bytes([0xF1, 0x73, 0xCD, 0x41, 0x1E, 0x02, 0x42, 0xEF, 0xBC, 0x30, 0x4F, 0x52, 0x6D, 0xE4, 0x12, 0xAF])


def sei_nal(capture_micros):
    """The SEI NAL unit (header byte included) with emulation prevention, as CaptureTimeSEI.nalUnit."""
    payload = bytes([5, 24]) + UUID + struct.pack(">Q", capture_micros) + b"\x80"
    out = bytearray([0x06])
    zeros = 0
    for byte in payload:
        if zeros >= 2 and byte <= 3:
            out.append(3)
            zeros = 0
        out.append(byte)
        zeros = zeros + 1 if byte == 0 else 0
    return bytes(out)


def read_exactly(stream, count):
    data = stream.read(count)
    if data is None or len(data) < count:
        return None
    return data


def with_sei(body, t0_micros, timestamp_ms):
    """An FLV video tag body (AVC NALU packet) with the SEI before its first slice."""
    if len(body) < 5 or body[0] & 0x0F != 7 or body[1] != 1:
        return body  # not H.264 NAL units (a sequence header, end of sequence)
    cts = int.from_bytes(body[2:5], "big", signed=True)
    nal = sei_nal(t0_micros + (timestamp_ms + cts) * 1000)
    units = body[5:]
    offset = 0
    while offset + 4 <= len(units):
        size = int.from_bytes(units[offset:offset + 4], "big")
        if size == 0 or offset + 4 + size > len(units):
            return body  # malformed: leave it as it came
        if 1 <= units[offset + 4] & 0x1F <= 5:
            return body[:5] + units[:offset] + struct.pack(">I", len(nal)) + nal + units[offset:]
        offset += 4 + size
    return body


def main():
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit("usage: flv-capture-sei.py T0_MICROS < in.flv > out.flv")
    t0 = int(sys.argv[1])
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    header = read_exactly(source, 9)
    if header is None or header[:3] != b"FLV":
        sys.exit("flv-capture-sei.py: the input is not FLV")
    rest = read_exactly(source, int.from_bytes(header[5:9], "big") - 9 + 4)  # + PreviousTagSize0
    if rest is None:
        sys.exit("flv-capture-sei.py: the FLV header is cut short")
    sink.write(header + rest)
    while True:
        tag = read_exactly(source, 11)
        if tag is None:
            break
        size = int.from_bytes(tag[1:4], "big")
        body = read_exactly(source, size)
        if body is None or read_exactly(source, 4) is None:
            break
        if tag[0] & 0x1F == 9:
            timestamp = int.from_bytes(tag[4:7], "big") | tag[7] << 24
            body = with_sei(body, t0, timestamp)
        sink.write(bytes([tag[0]]) + len(body).to_bytes(3, "big") + tag[4:] + body + struct.pack(">I", 11 + len(body)))
        sink.flush()


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        pass
