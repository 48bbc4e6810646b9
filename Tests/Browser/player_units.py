#!/usr/bin/python3
"""The watch page's parsers, checked inside headless Chromium without a stream.

    player_units.py URL

Opens the watch page at URL (a stream nobody publishes: the page waits) and runs its
parsers (window.livelinePlayer) on fixed bytes: the FLV reader fed a stream split at every
offset and one byte at a time, refusing what is not FLV and a tag over its budget; the
capture-time SEI read back through emulation-prevention bytes, from an SEI with other
messages before it, and not from an SEI after the first slice; the avcC codec string and
the AudioSpecificConfig; for the MSE path, an SPS's picture size and the fMP4 boxes. For
HLS: the MPEG-TS demuxer on a transport stream made here (fed whole, split at every offset
and one byte at a time; a PES spanning packets; PTS/DTS across the 33-bit wrap; refusing
bytes that are not TS, a PES over 8 MiB and a segment over 32 MiB), its frames turned into
FLV bodies (Annex B to length-prefixed NAL units and an avcC record, ADTS to an
AudioSpecificConfig and raw frames), the playlist parser (segments, relative URIs with a
token, refusing what is not a playlist or is over its budgets), which segment the page
fetches next (the live end, in order, a jump when behind, a restart) and the pacer's timing.
Prints one JSON line {"checks": N, "failures": [...]}; exit 0 when none failed, 1 otherwise.
"""

import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

UUID = bytes([0xF1, 0x73, 0xCD, 0x41, 0x1E, 0x02, 0x42, 0xEF, 0xBC, 0x30, 0x4F, 0x52, 0x6D, 0xE4, 0x12, 0xAF])


def escaped(rbsp):
    """H.264 emulation prevention (§7.4.1): a 3 before any byte <= 3 that follows two zeros."""
    out, zeros = bytearray(), 0
    for b in rbsp:
        if zeros >= 2 and b <= 3:
            out.append(3)
            zeros = 0
        out.append(b)
        zeros = zeros + 1 if b == 0 else 0
    return bytes(out)


def sei(micros, before=b""):
    """An SEI NAL unit: `before` (whole SEI messages), then LiveLine's capture time."""
    return b"\x06" + escaped(before + bytes([5, 24]) + UUID + struct.pack(">Q", micros) + b"\x80")


def avcc(*nals):
    return b"".join(struct.pack(">I", len(n)) + n for n in nals)


def flv_tag(kind, ts, payload):
    size = len(payload)
    head = bytes([kind, size >> 16, (size >> 8) & 0xFF, size & 0xFF,
                  (ts >> 16) & 0xFF, (ts >> 8) & 0xFF, ts & 0xFF, (ts >> 24) & 0xFF, 0, 0, 0])
    return head + payload + struct.pack(">I", 11 + size)


def mpeg_time(value, prefix):
    """A 33-bit PTS/DTS in the PES header's 5 bytes (ISO/IEC 13818-1 §2.4.3.7)."""
    return bytes([(prefix << 4) | ((value >> 29) & 0x0E) | 1, (value >> 22) & 0xFF, ((value >> 14) & 0xFE) | 1,
                  (value >> 7) & 0xFF, ((value << 1) & 0xFE) | 1])


def pes(stream_id, payload, pts, dts=None, bounded=True):
    """A PES packet; `bounded=False` says length 0, as video PES may."""
    times = mpeg_time(pts, 3 if dts is not None else 2) + (mpeg_time(dts, 1) if dts is not None else b"")
    length = 3 + len(times) + len(payload) if bounded else 0
    return (b"\x00\x00\x01" + bytes([stream_id]) + struct.pack(">H", length)
            + bytes([0x80, 0xC0 if dts is not None else 0x80, len(times)]) + times + payload)


def crc32_mpeg(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) & 0xFFFFFFFF if crc & 0x80000000 else (crc << 1) & 0xFFFFFFFF
    return crc


def psi_packet(pid, table_id, body):
    """A PSI section alone in one TS packet (pointer_field 0, CRC, 0xFF after it)."""
    section = bytes([table_id, 0xB0 | ((len(body) + 4) >> 8), (len(body) + 4) & 0xFF]) + body
    section += struct.pack(">I", crc32_mpeg(section))
    packet = bytes([0x47, 0x40 | (pid >> 8), pid & 0xFF, 0x10, 0]) + section
    return packet + b"\xff" * (188 - len(packet))


def ts_packets(pid, data, pcr=None):
    """A PES split into TS packets: the first with the start indicator (and a PCR), the last
    filled by adaptation-field stuffing."""
    out, first = b"", True
    while data:
        field = bytes([0x10]) + struct.pack(">IH", pcr >> 1, ((pcr & 1) << 15) | 0x7E00) if first and pcr is not None else None
        room = 184 - (0 if field is None else 1 + len(field))
        chunk, data = data[:room], data[room:]
        if len(chunk) < room:
            need = room - len(chunk)
            field = (field + b"\xff" * need) if field is not None else (b"" if need == 1 else b"\x00" + b"\xff" * (need - 2))
        head = bytes([0x47, (0x40 if first else 0) | (pid >> 8), pid & 0xFF, 0x30 if field is not None else 0x10])
        packet = head + (bytes([len(field)]) + field if field is not None else b"") + chunk
        assert len(packet) == 188
        out += packet
        first = False
    return out


def adts(payload, crc=False):
    """An ADTS frame of AAC LC, 48 kHz, 2 channels (with a CRC field when `crc`)."""
    size = (9 if crc else 7) + len(payload)
    head = bytes([0xFF, 0xF0 if crc else 0xF1, 0x40 | (3 << 2), (2 << 6) | (size >> 11), (size >> 3) & 0xFF,
                  ((size & 7) << 5) | 0x1F, 0xFC])
    return head + (b"\x12\x34" if crc else b"") + payload


TIME = 0x0000_0300_0000_0001  # zero runs that need emulation prevention
SLICE = b"\x65\x88\x84\x00"
FLV = (b"FLV\x01\x05\x00\x00\x00\x09\x00\x00\x00\x00"
       + flv_tag(18, 0, b"\x02\x00\x0aonMetaData")
       + flv_tag(9, 40, b"\x17\x01\x00\x00\x00" + avcc(sei(TIME), SLICE))
       + flv_tag(8, 0x01000020, b"\xaf\x01" + bytes(range(7))))

SPS = bytes.fromhex("6764001eacd940a02ff97011000003000100000300320f162d96")
PPS = bytes.fromhex("68ebe3cb22c0")
WRAP = 1 << 33
DTS1 = WRAP - 1800                 # 20 ms before the 33-bit wrap: the times below cross it
VIDEO_PID, AUDIO_PID = 0x100, 0x101
IDR = b"\x65\x88\x84" + bytes((i * 7) % 251 + 1 for i in range(600))   # spans four packets
P_SLICE = b"\x41\x9a\x00\x00\x03\x01\x22"
AUDIO_RAW = [bytes(range(1, 40)), bytes(range(50, 80))]


def hls_fixture():
    """A transport stream (PAT with a network PID, a PMT with a descriptor and a stream the
    player leaves alone, a keyframe PES over four packets, an audio PES of two ADTS frames, a
    PCR-only packet, a null packet, a second video PES) and the FLV bodies the page should
    make of it, as "type@ms:hex" in the order it hands them on."""
    au1 = (b"\x00\x00\x00\x01\x09\xf0" + b"\x00\x00\x00\x01" + SPS + b"\x00\x00\x01" + PPS
           + b"\x00\x00\x01" + sei(TIME) + b"\x00\x00\x01" + IDR + b"\x00")
    au2 = b"\x00\x00\x00\x01\x09\xf0\x00\x00\x01" + P_SLICE
    pat = psi_packet(0, 0x00, bytes([0, 1, 0xC1, 0, 0]) + bytes([0, 0, 0xE0, 0x10]) + bytes([0, 1, 0xF0, 0x00]))
    pmt = psi_packet(0x1000, 0x02, bytes([0, 1, 0xC1, 0, 0, 0xE1, 0x00, 0xF0, 6]) + bytes(6)
                     + bytes([0x06, 0xE1, 0x02, 0xF0, 3]) + bytes(3)
                     + bytes([0x1B, 0xE1, 0x00, 0xF0, 0]) + bytes([0x0F, 0xE1, 0x01, 0xF0, 0]))
    pcr_only = bytes([0x47, 0x01, 0x00, 0x20, 183, 0x10]) + bytes(6) + b"\xff" * 176
    null = bytes([0x47, 0x1F, 0xFF, 0x10]) + bytes(184)
    stream = (pat + pmt + ts_packets(VIDEO_PID, pes(0xE0, au1, (DTS1 + 5400) % WRAP, DTS1, bounded=False), pcr=DTS1 - 63000)
              + ts_packets(AUDIO_PID, pes(0xC0, adts(AUDIO_RAW[0]) + adts(AUDIO_RAW[1], crc=True), DTS1 + 900))
              + pcr_only + null + ts_packets(VIDEO_PID, pes(0xE0, au2, (DTS1 + 5400) % WRAP, (DTS1 + 2700) % WRAP, bounded=False)))
    avcc_record = bytes([1, SPS[1], SPS[2], SPS[3], 0xFF, 0xE1]) + struct.pack(">H", len(SPS)) + SPS + b"\x01" + struct.pack(">H", len(PPS)) + PPS
    start = 1000  # the page's timeline starts at 1000 ms: the first time seen (the audio, 10 ms after the first DTS)
    tags = [(8, start, b"\xaf\x00\x11\x90"), (8, start, b"\xaf\x01" + AUDIO_RAW[0]),
            (8, start + 21, b"\xaf\x01" + AUDIO_RAW[1]),   # 1024 samples at 48 kHz later
            (9, start - 10, b"\x17\x00\x00\x00\x00" + avcc_record),
            (9, start - 10, b"\x17\x01\x00\x00\x3c" + avcc(sei(TIME), IDR)),            # composition 60 ms
            (9, start + 20, b"\x27\x01\x00\x00\x1e" + avcc(P_SLICE))]                   # after the wrap; 30 ms
    frames = [f"audio@{DTS1 + 900}/{DTS1 + 900}", f"video@{(DTS1 + 5400) % WRAP}/{DTS1}",
              f"video@{(DTS1 + 5400) % WRAP}/{(DTS1 + 2700) % WRAP}"]
    continuation = bytes([0x47, 0x01, 0x00, 0x10]) + bytes(range(184))
    big_pes = pes(0xE0, b"\x00\x00\x01\x41", 0, bounded=False)
    big = (pat + pmt + ts_packets(VIDEO_PID, big_pes), len(big_pes))
    return stream, ["%d@%d:%s" % (t, ms, body.hex()) for t, ms, body in tags], frames, big, continuation


PLAYLIST = """#EXTM3U
#EXT-X-VERSION:3
#EXT-X-TARGETDURATION:1
#EXT-X-MEDIA-SEQUENCE:41

#EXTINF:1.000,
cam/41.ts?token=a.b-c
#EXT-X-DISCONTINUITY
#EXTINF:0.967,
cam/42.ts?token=a.b-c
#EXTINF:1.033,
/other/43.ts
"""

HLS_CHECKS = r"""
(async () => {
  const P = window.livelinePlayer, failures = [];
  let checks = 0;
  const check = (ok, what) => { checks++; if (!ok) failures.push(what); };
  const hex = (s) => new Uint8Array(s.match(/../g).map((h) => parseInt(h, 16)));
  const toHex = (b) => Array.from(b, (x) => (x < 16 ? "0" : "") + x.toString(16)).join("");
  const throws = (work, text) => {
    try { work(); check(false, "accepted: " + text); } catch (e) { check(String(e.message).includes(text), text + ": " + e.message); }
  };
  const ts = hex(STREAM_HEX);
  const demux = (pieces, videoFirst) => {
    const tags = [], frames = [];
    const flv = new P.TSToFLV((type, ms, body) => tags.push(type + "@" + ms + ":" + toHex(body)), () => videoFirst && d.has("video"));
    const d = new P.TSDemuxer((kind, pts, dts, data) => { frames.push(kind + "@" + pts + "/" + dts); flv.frame(kind, pts, dts, data); });
    for (const p of pieces) d.push(p);
    d.end();
    return { tags, frames };
  };
  const whole = demux([ts]);
  const expected = EXPECTED_TAGS;
  check(whole.tags.length === expected.length, "TS: " + whole.tags.length + " FLV bodies, not " + expected.length);
  expected.forEach((tag, i) => check(whole.tags[i] === tag, "TS body " + i + ": " + (whole.tags[i] || "none").slice(0, 80) + " is not " + tag.slice(0, 80)));
  check(JSON.stringify(whole.frames) === JSON.stringify(EXPECTED_FRAMES), "TS PTS/DTS " + whole.frames);
  let same = true;
  for (let i = 1; i < ts.length; i++) same = same && JSON.stringify(demux([ts.slice(0, i), ts.slice(i)])) === JSON.stringify(whole);
  check(same, "TS split at some offset reads differently");
  check(JSON.stringify(demux(Array.from(ts, (b) => new Uint8Array([b])))) === JSON.stringify(whole), "TS one byte at a time");
  check(JSON.stringify(demux([ts.slice(0, 3 * 188), ts.slice(3 * 188, 7 * 188 + 5), ts.slice(7 * 188 + 5)])) === JSON.stringify(whole), "TS in three pieces");
  // Audio waits for the video's sequence header when the program has video (as on the FLV feed).
  const videoFirst = demux([ts], true).tags;
  check(JSON.stringify(videoFirst) === JSON.stringify([3, 4, 0, 1, 2, 5].map((i) => expected[i])),
        "audio after the video's header: " + videoFirst.map((t) => t.slice(0, 12)));
  // Damaged streams: every byte set to a few values in turn, and random changes, read or refused
  // with the demuxer's own message (never a TypeError or RangeError), times always numbers.
  let seed = 17;
  const random = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const damaged = [];
  for (let i = 0; i < ts.length; i++) {
    for (const v of [0x00, 0xFF, 0x3C, 0x80, 0x07]) { const d = ts.slice(); d[i] = v; damaged.push(d); }
  }
  for (let k = 0; k < 300; k++) {
    const d = ts.slice();
    for (let j = 0; j < 1 + random(4); j++) d[random(d.length)] = random(256);
    damaged.push(d);
  }
  const badErrors = [], badTimes = [];
  for (const d of damaged) {
    try {
      for (const tag of demux([d], true).tags) if (!Number.isFinite(Number(tag.split("@")[1].split(":")[0]))) badTimes.push(tag.slice(0, 20));
    } catch (e) {
      if (e.constructor !== Error) badErrors.push(e.constructor.name + ": " + e.message);
    }
  }
  check(badErrors.length === 0, "damaged TS: " + badErrors.slice(0, 3));
  check(badTimes.length === 0, "damaged TS times: " + badTimes.slice(0, 3));
  const seiBody = hex(whole.tags[4].split(":")[1]);
  check(P.captureTimeMicros(seiBody.subarray(5), 4) === TIME, "the capture time survives the demuxer");
  throws(() => demux([hex("48" + STREAM_HEX.slice(2))]), "not MPEG-TS");
  throws(() => demux([ts.slice(0, ts.length - 1)]), "inside a transport packet");

  // A PES of unbounded length over the player's 8 MiB: refused, one packet under it is not.
  const big = hex(BIG_HEX), more = hex(MORE_HEX);
  const bigPES = (packets) => {
    const d = new P.TSDemuxer(() => {});
    d.push(big);
    const block = new Uint8Array(188 * 1024);
    for (let i = 0; i < 1024; i++) block.set(more, i * 188);
    for (let n = packets; n > 0; n -= 1024) d.push(n >= 1024 ? block : block.subarray(0, n * 188));
  };
  const firstPayload = BIG_FIRST;  // the PES bytes in the first packet
  const under = Math.floor((8 * 1024 * 1024 - firstPayload) / 184);
  let underOK = true;
  try { bigPES(under); } catch (e) { underOK = false; }
  check(underOK, "a PES just under 8 MiB is refused");
  throws(() => bigPES(under + 1), "PES packet over the player's 8388608 bytes");
  // A segment over 32 MiB (null packets): refused; the count starts again at each end().
  const nulls = new Uint8Array(188 * 4096);
  for (let i = 0; i < 4096; i++) nulls.set([0x47, 0x1F, 0xFF, 0x10], i * 188);
  const segment = (mib, ends) => {
    const d = new P.TSDemuxer(() => {});
    for (let bytes = 0, since = 0; bytes < mib * 1024 * 1024; bytes += nulls.length, since += nulls.length) {
      if (ends && since > 16 * 1024 * 1024) { d.end(); since = 0; }
      d.push(nulls);
    }
  };
  throws(() => segment(33, false), "segment over the player's 33554432 bytes");
  let endsOK = true;
  try { segment(40, true); } catch (e) { endsOK = false; }
  check(endsOK, "segments under 32 MiB each are refused when counted together");

  // The playlist.
  const base = "http://127.0.0.1:1/live/cam.m3u8?token=a.b-c";
  const list = P.parsePlaylist(PLAYLIST_TEXT, base);
  check(list.targetDuration === 1 && list.mediaSequence === 41 && !list.ended, "playlist head " + JSON.stringify(list));
  check(list.segments.map((s) => s.sequence).join() === "41,42,43", "segment numbers " + list.segments.map((s) => s.sequence));
  check(list.segments[0].uri === "http://127.0.0.1:1/live/cam/41.ts?token=a.b-c", "relative URI " + list.segments[0].uri);
  check(list.segments[2].uri === "http://127.0.0.1:1/other/43.ts", "absolute path " + list.segments[2].uri);
  check(list.segments.map((s) => s.discontinuity).join() === "false,true,false", "discontinuity " + list.segments.map((s) => s.discontinuity));
  check(list.segments[1].duration === 0.967, "EXTINF " + list.segments[1].duration);
  check(P.parsePlaylist(PLAYLIST_TEXT.replace(/\n/g, "\r\n") + "#EXT-X-ENDLIST\r\n", base).ended, "CRLF lines and the end tag");
  throws(() => P.parsePlaylist(PLAYLIST_TEXT.replace("#EXTM3U\n", ""), base), "no #EXTM3U");
  throws(() => P.parsePlaylist("<html>\n", base), "no #EXTM3U");
  throws(() => P.parsePlaylist("#EXTM3U\nx.ts\n", base), "no #EXT-X-TARGETDURATION");
  throws(() => P.parsePlaylist("#EXTM3U\n#EXT-X-TARGETDURATION:x\n", base), "not a number");
  const many = (n) => "#EXTM3U\n#EXT-X-TARGETDURATION:1\n" + "#EXTINF:1,\ns.ts\n".repeat(n);
  check(P.parsePlaylist(many(10000), base).segments.length === 10000, "10 000 segments are accepted");
  throws(() => P.parsePlaylist(many(10001), base), "over 10000 segments");
  throws(() => P.parsePlaylist("#EXTM3U\n#" + "x".repeat(1024 * 1024), base), "over the player's 1048576");

  // Where the page goes on: the live end first, then each newer segment; the newest after
  // falling more than 3 behind or out of the window; the newest, as a new timeline, when the
  // numbers went back.
  const plan = (next, first, last) => {
    const segments = [];
    for (let n = first; n <= last; n++) segments.push({ sequence: n });
    return JSON.stringify(P.hlsNext({ segments }, next));
  };
  const goes = (next, first, last, to, jump, restart) =>
    check(plan(next, first, last) === JSON.stringify({ next: to, jump, restart }), `next ${next} in ${first}..${last}: ${plan(next, first, last)}`);
  goes(null, 41, 43, 43, false, false);
  goes(43, 41, 43, 43, false, false);
  goes(44, 41, 43, 44, false, false);
  goes(42, 39, 44, 42, false, false);
  goes(41, 38, 44, 44, true, false);
  goes(40, 41, 43, 43, true, false);
  goes(50, 0, 2, 2, true, true);
  check(JSON.stringify(P.hlsNext({ segments: [] }, 7)) === JSON.stringify({ next: 7, jump: false, restart: false }), "an empty playlist");

  // A discontinuity: the next time follows the last one, whatever the new clock says.
  const times = [];
  const flv = new P.TSToFLV((type, ms) => times.push(ms));
  flv.frame("audio", 900000, 900000, hex(ADTS_FRAME));
  flv.frame("audio", 900000 + 1920, 900000 + 1920, hex(ADTS_FRAME));
  flv.discontinuity();
  flv.frame("audio", 5, 5, hex(ADTS_FRAME));
  check(times.join() === "1000,1000,1021,1121", "times around a discontinuity " + times);

  // The pacer hands frames on at their timestamps' pace, and jumps ahead when too much waits.
  const released = [];
  const t0 = performance.now();
  const pacer = new P.Pacer((type, ms) => released.push([type, ms, performance.now() - t0]), 1000, 2000);
  pacer.push(9, 5000, null); pacer.push(8, 5010, null); pacer.push(9, 5150, null); pacer.push(9, 5300, null);
  await new Promise((resolve) => setTimeout(resolve, 450));
  const at = (ms) => (released.find((r) => r[1] === ms) || [0, 0, -1])[2];
  check(released.length === 4, "paced frames released: " + JSON.stringify(released));
  check(at(5000) < 50 && at(5150) >= 140 && at(5300) >= 290 && at(5300) < 450, "paced times " + JSON.stringify(released));
  pacer.push(9, 9000, null);    // 3.7 s ahead of the clock: the clock jumps to keep 1 s
  await new Promise((resolve) => setTimeout(resolve, 600));
  check(at(9000) === -1, "a frame far ahead waits what the pacer keeps " + JSON.stringify(released));
  await new Promise((resolve) => setTimeout(resolve, 700));
  check(at(9000) > 0, "a frame far ahead is released after a second " + JSON.stringify(released));
  pacer.stop();
  return { checks, failures };
})()
"""

CHECKS = r"""
(() => {
  const P = window.livelinePlayer, failures = [];
  let checks = 0;
  const check = (ok, what) => { checks++; if (!ok) failures.push(what); };
  const hex = (s) => new Uint8Array(s.match(/../g).map((h) => parseInt(h, 16)));
  const flv = hex(FLV_HEX);
  const read = (pieces) => {
    const tags = [];
    const r = new P.FLVReader((type, ts, data) => tags.push(type + "@" + ts + ":" + Array.from(data).join(",")));
    for (const p of pieces) r.push(p);
    return tags.join("|");
  };
  const whole = read([flv]);
  check(whole.split("|").length === 3, "three tags, got " + whole);
  check(whole.split("|")[2].startsWith("8@" + 0x01000020 + ":"), "extended timestamp: " + whole.split("|")[2]);
  for (let i = 1; i < flv.length; i++) {
    const split = read([flv.slice(0, i), flv.slice(i)]);
    check(split === whole, "split at " + i);
  }
  check(read(Array.from(flv, (b) => new Uint8Array([b]))) === whole, "one byte at a time");
  check(read([flv.slice(0, flv.length - 1)]).split("|").length === 2, "a tag one byte short waits");
  const throws = (bytes, text) => {
    try { read([bytes]); check(false, "accepted: " + text); } catch (e) { check(String(e.message).includes(text), text + ": " + e.message); }
  };
  throws(hex("464c5601050000000900000000" .replace("464c56", "3c6874")), "not FLV");
  throws(hex("464c560105000000090000000009" + "ffffff" + "0000000000000000"), "over the player's");
  const video = hex(VIDEO_HEX);
  check(P.captureTimeMicros(video, 4) === TIME, "SEI time " + P.captureTimeMicros(video, 4));
  check(P.captureTimeMicros(hex(OTHER_FIRST_HEX), 4) === TIME, "SEI after another SEI message");
  check(P.captureTimeMicros(hex(AFTER_SLICE_HEX), 4) === null, "SEI after the first slice is not this frame's");
  check(P.captureTimeMicros(video.slice(0, 20), 4) === null, "a cut access unit has no time");
  check(P.avcCodec(hex("0164001fffe10000")) === "avc1.64001F", "codec " + P.avcCodec(hex("0164001fffe10000")));
  const aac = P.aacConfig(hex("1190"));
  check(aac.codec === "mp4a.40.2" && aac.sampleRate === 48000 && aac.numberOfChannels === 2, "AAC " + JSON.stringify(aac));
  // x264's SPS for 640x360 High (cropped from 368 lines), and the fMP4 boxes made for MSE.
  const size = P.spsSize(hex("6764001eacd940a02ff97011000003000100000300320f162d96"));
  check(size.width === 640 && size.height === 360, "SPS size " + JSON.stringify(size));
  const boxes = (bytes) => {
    const out = [];
    for (let pos = 0; pos + 8 <= bytes.length;) {
      const size = ((bytes[pos] << 24) >>> 0) + (bytes[pos + 1] << 16) + (bytes[pos + 2] << 8) + bytes[pos + 3];
      out.push(String.fromCharCode(...bytes.slice(pos + 4, pos + 8)) + ":" + size);
      if (size < 8) break;
      pos += size;
    }
    return out;
  };
  const init = P.initSegment({ kind: "video", config: hex("0164001fffe10000"), width: 640, height: 360, timescale: 1000 });
  check(boxes(init).map((b) => b.split(":")[0]).join(",") === "ftyp,moov", "init boxes " + boxes(init));
  check(boxes(init).reduce((n, b) => n + Number(b.split(":")[1]), 0) === init.length, "init box sizes add up");
  const fragment = P.mediaSegment(7, { key: true, decodeTime: 2 ** 33 + 5, cts: -2, duration: 33, data: hex("00000002aabb") });
  const parts = boxes(fragment);
  check(parts.length === 2 && parts[0].startsWith("moof:") && parts[1] === "mdat:14", "fragment boxes " + parts);
  const moofSize = Number(parts[0].split(":")[1]);
  check(fragment[moofSize + 8] === 0 && fragment[fragment.length - 1] === 0xbb, "mdat holds the sample");
  return { checks, failures };
})()
"""


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    video = avcc(sei(TIME), SLICE)
    other_first = avcc(sei(TIME, before=bytes([1, 2, 0xAA, 0xBB])), SLICE)
    after_slice = avcc(SLICE, sei(TIME))
    js = (CHECKS.replace("FLV_HEX", json.dumps(FLV.hex())).replace("VIDEO_HEX", json.dumps(video.hex()))
          .replace("OTHER_FIRST_HEX", json.dumps(other_first.hex()))
          .replace("AFTER_SLICE_HEX", json.dumps(after_slice.hex())).replace("TIME", str(TIME)))
    stream, tags, frames, big, continuation = hls_fixture()
    hls_js = (HLS_CHECKS.replace("STREAM_HEX", json.dumps(stream.hex())).replace("EXPECTED_TAGS", json.dumps(tags))
              .replace("EXPECTED_FRAMES", json.dumps(frames)).replace("BIG_HEX", json.dumps(big[0].hex())).replace("BIG_FIRST", str(big[1]))
              .replace("MORE_HEX", json.dumps(continuation.hex())).replace("PLAYLIST_TEXT", json.dumps(PLAYLIST))
              .replace("ADTS_FRAME", json.dumps(adts(b"\x01\x02").hex())).replace("TIME", str(TIME)))
    with cdp.start() as browser:
        browser.open(sys.argv[1])
        browser.wait_for("window.livelinePlayer !== undefined", 10)
        result = browser.evaluate(js)
        hls = browser.evaluate(hls_js, timeout=60)
    if result and hls:
        result = {"checks": result["checks"] + hls["checks"], "failures": result["failures"] + hls["failures"]}
    print(json.dumps(result), flush=True)
    return 0 if result and result["checks"] > 0 and not result["failures"] else 1


if __name__ == "__main__":
    sys.exit(main())
