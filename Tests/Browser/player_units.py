#!/usr/bin/python3
"""The watch page's parsers, checked inside headless Chromium without a stream.

    player_units.py URL

Opens the watch page at URL (a stream nobody publishes: the page waits) and runs its
parsers (window.livelinePlayer) on fixed bytes: the FLV reader fed a stream split at every
offset and one byte at a time, refusing what is not FLV and a tag over its budget; the
capture-time SEI read back through emulation-prevention bytes, from an SEI with other
messages before it, and not from an SEI after the first slice; the avcC codec string and
the AudioSpecificConfig; for the MSE path, an SPS's picture size and the fMP4 boxes. Prints one JSON line {"checks": N, "failures": [...]}; exit 0 when
none failed, 1 otherwise.
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


TIME = 0x0000_0300_0000_0001  # zero runs that need emulation prevention
SLICE = b"\x65\x88\x84\x00"
FLV = (b"FLV\x01\x05\x00\x00\x00\x09\x00\x00\x00\x00"
       + flv_tag(18, 0, b"\x02\x00\x0aonMetaData")
       + flv_tag(9, 40, b"\x17\x01\x00\x00\x00" + avcc(sei(TIME), SLICE))
       + flv_tag(8, 0x01000020, b"\xaf\x01" + bytes(range(7))))

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
    with cdp.start() as browser:
        browser.open(sys.argv[1])
        browser.wait_for("window.livelinePlayer !== undefined", 10)
        result = browser.evaluate(js)
    print(json.dumps(result), flush=True)
    return 0 if result and result["checks"] > 0 and not result["failures"] else 1


if __name__ == "__main__":
    sys.exit(main())
