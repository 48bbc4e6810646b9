// LiveLine's low-latency web player: the relay's FLV feed (one WebSocket message per FLV
// tag from /ws/{app}/{stream}, or HTTP-FLV read through fetch() streaming from
// /{app}/{stream}.flv with ?transport=flv, or HLS with ?transport=hls: the playlist
// /{app}/{stream}.m3u8 polled and its MPEG-TS segments demuxed here into the same FLV tag
// bodies, joined at the live end and paced by their timestamps), decoded with WebCodecs
// (VideoDecoder with the avcC record, AudioDecoder with the AAC AudioSpecificConfig),
// pictures drawn on a canvas as soon as they are decoded and sound scheduled through Web
// Audio with a short lead.
// Glass-to-glass latency is read from the capture-time SEI every LiveLine host puts in its
// H.264 (LiveCodec/CaptureTimeSEI.swift): wall-clock microseconds since the epoch, compared
// with this machine's clock when the picture is drawn. The figures are shown on the page and
// kept in window.livelineStats for tests and benchmarks. Plain JavaScript, no dependencies.
"use strict";

(function () {
  const MAX_TAG_BYTES = 8 * 1024 * 1024;    // one tag is buffered whole: a keyframe fits many times over
  const MAX_DECODE_QUEUE = 60;              // frames the video decoder may fall behind before a reset
  const AUDIO_LEAD_S = 0.04;                // how far ahead of "now" sound is scheduled
  const AUDIO_MAX_AHEAD_S = 0.3;            // scheduled further ahead than this: drop to catch up
  const LATENCY_LOG = 1000;                 // per-frame latencies kept for benchmarks
  const SEI_UUID = [0xF1, 0x73, 0xCD, 0x41, 0x1E, 0x02, 0x42, 0xEF, 0xBC, 0x30, 0x4F, 0x52, 0x6D, 0xE4, 0x12, 0xAF];

  // ---- FLV ------------------------------------------------------------------------------

  /** Reads an FLV byte stream in pieces of any size (FLV spec v10.1 §E.2, §E.3): the header,
   *  then PreviousTagSize / tag pairs. Calls onTag(type, timestampMs, data) per tag; throws
   *  an Error with a readable message on bytes that are not FLV. Buffers at most one tag. */
  class FLVReader {
    constructor(onTag) {
      this.onTag = onTag;
      this.pending = new Uint8Array(0);
      this.state = "header";
      this.need = 9;
    }

    push(chunk) {
      let buf = this.pending.length ? concat(this.pending, chunk) : chunk;
      let pos = 0;
      while (buf.length - pos >= this.need) {
        if (this.state === "header") {
          if (buf[pos] !== 0x46 || buf[pos + 1] !== 0x4C || buf[pos + 2] !== 0x56) throw new Error("the feed is not FLV");
          const offset = u32(buf, pos + 5);
          if (offset < 9 || offset > 1024) throw new Error("FLV header size " + offset + " is not 9");
          pos += 9;
          this.state = "skip";
          this.need = offset - 9 + 4;   // the rest of the header, then PreviousTagSize0
        } else if (this.state === "skip") {
          pos += this.need;
          this.state = "tag";
          this.need = 11;
        } else if (this.state === "tag") {
          const size = (buf[pos + 1] << 16) | (buf[pos + 2] << 8) | buf[pos + 3];
          if (size > MAX_TAG_BYTES) throw new Error("an FLV tag of " + size + " bytes is over the player's " + MAX_TAG_BYTES);
          this.state = "body";
          this.need = 11 + size + 4;    // header, body, PreviousTagSize
        } else {
          const type = buf[pos] & 0x1F;
          const size = this.need - 15;
          const ts = ((buf[pos + 7] << 24) | (buf[pos + 4] << 16) | (buf[pos + 5] << 8) | buf[pos + 6]) >>> 0;
          const data = buf.subarray(pos + 11, pos + 11 + size);
          pos += this.need;
          this.state = "tag";
          this.need = 11;
          this.onTag(type, ts, data);
        }
      }
      this.pending = pos < buf.length ? buf.slice(pos) : new Uint8Array(0);
    }
  }

  function concat(a, b) {
    const out = new Uint8Array(a.length + b.length);
    out.set(a, 0);
    out.set(b, a.length);
    return out;
  }

  /** The byte arrays `parts` one after another, in one new array. */
  function concatAll(parts) {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let pos = 0;
    for (const p of parts) { out.set(p, pos); pos += p.length; }
    return out;
  }

  function u32(b, i) {
    return ((b[i] << 24) >>> 0) + ((b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]);
  }

  function hex2(n) {
    return (n < 16 ? "0" : "") + n.toString(16).toUpperCase();
  }

  // ---- H.264 / AAC ------------------------------------------------------------------------

  /** The capture time (µs since the epoch) in a length-prefixed access unit's LiveLine SEI,
   *  or null. Stops at the first slice: SEI comes before it (H.264 §7.4.1.2.3). */
  function captureTimeMicros(au, lengthSize) {
    let pos = 0;
    while (pos + lengthSize <= au.length) {
      let len = 0;
      for (let i = 0; i < lengthSize; i++) len = len * 256 + au[pos + i];
      pos += lengthSize;
      if (len === 0 || pos + len > au.length) return null;
      const type = au[pos] & 0x1F;
      if (type === 6) {
        const t = seiTime(au.subarray(pos + 1, pos + len));
        if (t !== null) return t;
      } else if (type >= 1 && type <= 5) {
        return null;
      }
      pos += len;
    }
    return null;
  }

  /** Walks an SEI NAL unit's messages (emulation-prevention bytes removed) for LiveLine's
   *  user-data-unregistered message (payloadType 5) and returns its time, else null. */
  function seiTime(nal) {
    const rbsp = [];
    let zeros = 0;
    for (let i = 0; i < nal.length; i++) {
      const b = nal[i];
      if (zeros >= 2 && b === 3) { zeros = 0; continue; }
      rbsp.push(b);
      zeros = b === 0 ? zeros + 1 : 0;
    }
    let pos = 0;
    const varField = () => {
      let v = 0;
      while (pos < rbsp.length) {
        const b = rbsp[pos++];
        v += b;
        if (b !== 0xFF) return v;
      }
      return -1;
    };
    while (pos < rbsp.length && !(rbsp[pos] === 0x80 && pos === rbsp.length - 1)) {
      const type = varField();
      const size = varField();
      if (type < 0 || size < 0 || pos + size > rbsp.length) return null;
      if (type === 5 && size >= 24 && SEI_UUID.every((b, i) => rbsp[pos + i] === b)) {
        let t = 0;
        for (let i = 16; i < 24; i++) t = t * 256 + rbsp[pos + i];
        return t;
      }
      pos += size;
    }
    return null;
  }

  /** The WebCodecs codec string of an AVCDecoderConfigurationRecord ("avc1.42C01F"). */
  function avcCodec(avcc) {
    if (avcc.length < 7 || avcc[0] !== 1) throw new Error("the H.264 sequence header is not an avcC record");
    return "avc1." + hex2(avcc[1]) + hex2(avcc[2]) + hex2(avcc[3]);
  }

  const AAC_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];

  /** The decoder configuration of an AudioSpecificConfig (ISO 14496-3 §1.6.2.1). */
  function aacConfig(asc) {
    if (asc.length < 2) throw new Error("the AAC sequence header is too short");
    const objectType = asc[0] >> 3;
    const rateIndex = ((asc[0] & 7) << 1) | (asc[1] >> 7);
    const channels = (asc[1] >> 3) & 0xF;
    let sampleRate = AAC_RATES[rateIndex];
    if (rateIndex === 15) {
      if (asc.length < 5) throw new Error("the AAC sequence header is too short");
      sampleRate = ((asc[1] & 0x7F) << 17) | (asc[2] << 9) | (asc[3] << 1) | (asc[4] >> 7);
    }
    if (!sampleRate || channels < 1 || channels > 8) throw new Error("an AAC sequence header this player cannot read");
    return { codec: "mp4a.40." + objectType, sampleRate, numberOfChannels: channels, description: asc.slice() };
  }

  // ---- HLS (RFC 8216) with MPEG-TS segments (ISO/IEC 13818-1) -----------------------------
  // Segments are demuxed here and turned into the FLV tag bodies the rest of the page plays,
  // so both decoders, the SEI latency and the figures are the FLV path's.

  const MAX_PLAYLIST_BYTES = 1024 * 1024;
  const MAX_PLAYLIST_SEGMENTS = 10000;
  const MAX_PES_BYTES = 8 * 1024 * 1024;
  const MAX_SEGMENT_BYTES = 32 * 1024 * 1024;
  const TS_PACKET = 188;
  const MAX_HELD_AUDIO = 256;               // audio frames (5 s at 48 kHz) kept until the video's sequence header comes
  const MSE_LEAD_MS = 300;                  // HLS through MSE: frames handed to the element this far ahead of their time
  const PACER_LATE_MS = 100;                // a frame this late with nothing waiting: the pacer's clock starts again
  const MAX_HLS_BEHIND = 3;                 // segments listed past the one played before the page jumps to the newest
  const WRAP_33 = 2 ** 33;
  const TIMELINE_START_MS = 1000;           // the first time seen, on the FLV-like timeline the page plays
  const TIMELINE_GAP_MS = 100;              // after a discontinuity: from the last time to the next

  /** A media playlist's target duration (s), media sequence, segments ({ sequence, duration,
   *  uri resolved against `url`, discontinuity }) and whether it ended. Throws an Error with a
   *  readable message on text that is not one, or over the player's budgets. */
  function parsePlaylist(text, url) {
    if (text.length > MAX_PLAYLIST_BYTES) throw new Error("a playlist of " + text.length + " bytes is over the player's " + MAX_PLAYLIST_BYTES);
    const lines = text.split("\n");
    if (lines[0].replace(/^\uFEFF/, "").trim() !== "#EXTM3U") throw new Error("the playlist is not HLS (no #EXTM3U first)");
    const list = { targetDuration: null, mediaSequence: 0, segments: [], ended: false };
    let duration = null, discontinuity = false;
    const number = (line, tag) => {
      const v = Number(line.slice(tag.length).split(",")[0]);
      if (!Number.isFinite(v) || v < 0) throw new Error("the playlist's " + tag.slice(0, -1) + " is not a number");
      return v;
    };
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i].trim();
      if (line === "") continue;
      if (line.startsWith("#EXT-X-TARGETDURATION:")) list.targetDuration = number(line, "#EXT-X-TARGETDURATION:");
      else if (line.startsWith("#EXT-X-MEDIA-SEQUENCE:")) list.mediaSequence = number(line, "#EXT-X-MEDIA-SEQUENCE:");
      else if (line.startsWith("#EXTINF:")) duration = number(line, "#EXTINF:");
      else if (line === "#EXT-X-DISCONTINUITY") discontinuity = true;
      else if (line === "#EXT-X-ENDLIST") list.ended = true;
      else if (line.startsWith("#EXT-X-STREAM-INF")) throw new Error("a multivariant playlist: the player reads a stream's media playlist");
      else if (!line.startsWith("#")) {
        if (list.segments.length >= MAX_PLAYLIST_SEGMENTS) throw new Error("a playlist of over " + MAX_PLAYLIST_SEGMENTS + " segments");
        list.segments.push({ sequence: list.mediaSequence + list.segments.length, duration, uri: new URL(line, url).href, discontinuity });
        duration = null;
        discontinuity = false;
      }
    }
    if (list.targetDuration === null) throw new Error("the playlist has no #EXT-X-TARGETDURATION");
    return list;
  }

  /** Reads an MPEG transport stream in pieces of any size: PAT → PMT → the first H.264
   *  (stream_type 0x1B) and AAC ADTS (0x0F) streams, whose PES packets are put back together
   *  and handed to onFrame(kind "video" | "audio", pts, dts, payload) with 90 kHz times as
   *  they are (33 bits; dts = pts when absent). A PES of known length is handed on as soon as
   *  it is whole, one of unbounded length (video) when the next starts or at end(). Throws an
   *  Error with a readable message on bytes that are not MPEG-TS, a PES over `maxPES` bytes
   *  or a segment (the bytes between two end() calls) over `maxSegment`. */
  class TSDemuxer {
    constructor(onFrame, maxPES = MAX_PES_BYTES, maxSegment = MAX_SEGMENT_BYTES) {
      this.onFrame = onFrame;
      this.maxPES = maxPES;
      this.maxSegment = maxSegment;
      this.pending = new Uint8Array(0);
      this.segmentBytes = 0;
      this.pmtPID = null;
      this.streams = {};          // PID → { kind, pes: { parts, size, expected } | null }
    }

    push(chunk) {
      this.segmentBytes += chunk.length;
      if (this.segmentBytes > this.maxSegment) throw new Error("a segment over the player's " + this.maxSegment + " bytes");
      const buf = this.pending.length ? concat(this.pending, chunk) : chunk;
      let pos = 0;
      for (; pos + TS_PACKET <= buf.length; pos += TS_PACKET) this.packet(buf.subarray(pos, pos + TS_PACKET));
      this.pending = buf.slice(pos);
    }

    /** Whether the program has a stream of `kind` ("video" or "audio"). */
    has(kind) {
      return Object.values(this.streams).some((st) => st.kind === kind);
    }

    /** The segment's end: what is left of its PES packets is handed on. */
    end() {
      if (this.pending.length) throw new Error("the segment ends inside a transport packet");
      this.segmentBytes = 0;
      for (const pid of Object.keys(this.streams)) this.emit(this.streams[pid]);
    }

    packet(p) {
      if (p[0] !== 0x47) throw new Error("the segment is not MPEG-TS (no sync byte)");
      const start = (p[1] & 0x40) !== 0;
      const pid = ((p[1] & 0x1F) << 8) | p[2];
      const control = (p[3] >> 4) & 3;
      let pos = 4;
      if (control & 2) pos += 1 + p[4];
      if (!(control & 1) || pos >= TS_PACKET) return;
      const payload = p.subarray(pos);
      if (pid === 0 && start) this.pat(payload);
      else if (pid === this.pmtPID && start) this.pmt(payload);
      else if (this.streams[pid]) this.pesPiece(this.streams[pid], start, payload);
    }

    /** A PSI section (§2.4.4) of one packet: its bytes from table_id to before the CRC. */
    section(payload, tableID) {
      const s = payload.subarray(1 + payload[0]);
      if (s.length < 3 || s[0] !== tableID) return null;
      const length = ((s[1] & 0x0F) << 8) | s[2];
      return s.subarray(0, Math.min(s.length, 3 + length - 4));
    }

    pat(payload) {
      const s = this.section(payload, 0x00);
      for (let i = 8; s && i + 4 <= s.length; i += 4) {
        if (((s[i] << 8) | s[i + 1]) === 0) continue;  // the network PID
        this.pmtPID = ((s[i + 2] & 0x1F) << 8) | s[i + 3];
        return;
      }
    }

    pmt(payload) {
      const s = this.section(payload, 0x02);
      if (!s || s.length < 12) return;
      const have = Object.values(this.streams).map((st) => st.kind);
      for (let i = 12 + (((s[10] & 0x0F) << 8) | s[11]); i + 5 <= s.length; i += 5 + (((s[i + 3] & 0x0F) << 8) | s[i + 4])) {
        const kind = { 0x1B: "video", 0x0F: "audio" }[s[i]];
        const pid = ((s[i + 1] & 0x1F) << 8) | s[i + 2];
        if (kind && !have.includes(kind) && !this.streams[pid]) { this.streams[pid] = { kind, pes: null }; have.push(kind); }
      }
    }

    pesPiece(st, start, payload) {
      if (start) {
        this.emit(st);
        st.pes = { parts: [], size: 0, expected: null };
      }
      const pes = st.pes;
      if (!pes) return;  // joined in the middle of a PES: wait for the next
      pes.size += payload.length;
      if (pes.size > this.maxPES) {
        st.pes = null;
        throw new Error("a PES packet over the player's " + this.maxPES + " bytes");
      }
      pes.parts.push(payload.slice());
      if (pes.expected === null && pes.size >= 6) {
        const head = pes.parts.length === 1 ? pes.parts[0] : concatAll(pes.parts);
        const length = (head[4] << 8) | head[5];
        pes.expected = length ? 6 + length : 0;
      }
      if (pes.expected && pes.size >= pes.expected) this.emit(st);
    }

    emit(st) {
      const pes = st.pes;
      st.pes = null;
      if (!pes || pes.size < 9) return;
      const b = concatAll(pes.parts);
      if (b[0] !== 0 || b[1] !== 0 || b[2] !== 1) throw new Error("a PES packet without its start code");
      const flags = b[7], headerEnd = 9 + b[8];
      if (!(flags & 0x80) || headerEnd > b.length || headerEnd < 14 + ((flags & 0x40) ? 5 : 0)) return;  // no PTS: nothing to time it by
      const pts = pesTime(b, 9);
      const dts = (flags & 0x40) ? pesTime(b, 14) : pts;
      this.onFrame(st.kind, pts, dts, b.subarray(headerEnd, pes.expected ? Math.min(pes.expected, b.length) : b.length));
    }
  }

  /** A 33-bit PTS or DTS from the PES header's 5 bytes at `i` (§2.4.3.7). */
  function pesTime(b, i) {
    return ((b[i] >> 1) & 7) * 2 ** 30 + (b[i + 1] << 22) + ((b[i + 2] >> 1) << 15) + (b[i + 3] << 7) + (b[i + 4] >> 1);
  }

  /** The NAL units of an Annex-B byte stream (H.264 Annex B), without start codes and the
   *  zero bytes before them. */
  function annexBUnits(b) {
    const units = [];
    let start = -1;
    const take = (end) => {
      while (end > start && b[end - 1] === 0) end--;
      if (start >= 0 && end > start) units.push(b.subarray(start, end));
    };
    for (let i = 0; i + 2 < b.length;) {
      if (b[i + 2] > 1) i += 3;
      else if (b[i] === 0 && b[i + 1] === 0 && b[i + 2] === 1) { take(i); i += 3; start = i; }
      else i++;
    }
    take(b.length);
    return units;
  }

  /** An AVCDecoderConfigurationRecord (ISO 14496-15 §5.2.4.1) of SPS and PPS NAL units. */
  function avcDecoderConfiguration(spss, ppss) {
    const parts = [new Uint8Array([1, spss[0][1], spss[0][2], spss[0][3], 0xFF, 0xE0 | spss.length])];
    for (const n of spss) parts.push(be(n.length, 2), n);
    parts.push(new Uint8Array([ppss.length]));
    for (const n of ppss) parts.push(be(n.length, 2), n);
    return concatAll(parts);
  }

  /** Turns a TS demuxer's frames into FLV tag bodies, onTag(type 9 | 8, ms, body), as the
   *  relay's FLV feed carries them: an AVC sequence header (avcC) whenever the SPS/PPS are
   *  first seen or change, then access units as 4-byte length-prefixed NAL units with their
   *  composition offset; an AAC sequence header (AudioSpecificConfig) from the first ADTS
   *  header (and when it changes), then raw AAC frames. Times are milliseconds since the
   *  first one seen plus TIMELINE_START_MS (the first seen may be audio a little after the
   *  video beside it: both stay positive), across the 33-bit wrap; after discontinuity() the
   *  next one is TIMELINE_GAP_MS after the last (a new timeline: the publisher started again).
   *  While `hasVideo()` says a video stream is there but its first sequence header has not
   *  come, audio waits (up to MAX_HELD_AUDIO frames): as on the FLV feed, the video's header
   *  comes first (a media source takes no new track once another has played). */
  class TSToFLV {
    constructor(onTag, hasVideo = () => false) {
      this.onTag = onTag;
      this.hasVideo = hasVideo;
      this.held = [];             // audio [ms, body] waiting for the video's sequence header
      this.params = null;         // the SPS/PPS of the last AVC sequence header, as hex
      this.asc = null;            // the last AudioSpecificConfig, as "b0,b1"
      this.last = null;           // the last 90 kHz time seen (33 bits) and its unwrapped value
      this.unwrapped = 0;
      this.origin = 0;            // unwrapped time that is 0 ms
      this.lastMs = 0;
      this.restart = false;
    }

    frame(kind, pts, dts, data) {
      if (kind === "video") this.video(pts, dts, data); else this.audio(pts, data);
    }

    discontinuity() { this.restart = true; }

    /** 90 kHz `t` (33 bits) as ms on the timeline. */
    ms(t) {
      if (this.last === null || this.restart) {
        this.origin = t - (this.last === null ? TIMELINE_START_MS : this.lastMs + TIMELINE_GAP_MS) * 90;
        this.unwrapped = t;
        this.restart = false;
      } else {
        let d = t - this.last;
        if (d > WRAP_33 / 2) d -= WRAP_33; else if (d < -WRAP_33 / 2) d += WRAP_33;
        this.unwrapped += d;
      }
      this.last = t;
      this.lastMs = Math.max(0, Math.round((this.unwrapped - this.origin) / 90));
      return this.lastMs;
    }

    video(pts, dts, annexB) {
      const spss = [], ppss = [], nals = [];
      let key = false;
      for (const n of annexBUnits(annexB)) {
        const type = n[0] & 0x1F;
        if (type === 7) spss.push(n);
        else if (type === 8) ppss.push(n);
        else if (type !== 9) { nals.push(n); if (type === 5) key = true; }
      }
      const ts = this.ms(dts);
      const cts = this.ms(pts) - ts;
      this.lastMs = ts;
      if (spss.length && ppss.length && spss[0].length >= 4) {
        const params = spss.concat(ppss).map((n) => Array.from(n, hex2).join("")).join("/");
        if (params !== this.params) {
          this.params = params;
          this.onTag(9, ts, concat(new Uint8Array([0x17, 0, 0, 0, 0]), avcDecoderConfiguration(spss, ppss)));
        }
      }
      if (nals.length) this.onTag(9, ts, this.lengthPrefixed(nals, key, cts));
      if (this.params !== null) for (const [ms, body] of this.held.splice(0)) this.onTag(8, ms, body);
    }

    lengthPrefixed(nals, key, cts) {
      const size = 5 + nals.reduce((n, u) => n + 4 + u.length, 0);
      const body = new Uint8Array(size);
      body.set([key ? 0x17 : 0x27, 1, (cts >> 16) & 0xFF, (cts >> 8) & 0xFF, cts & 0xFF]);
      let pos = 5;
      for (const n of nals) { body.set(be(n.length, 4), pos); body.set(n, pos + 4); pos += 4 + n.length; }
      return body;
    }

    audioTag(ms, body) {
      if (this.params === null && this.hasVideo()) {
        if (this.held.length < MAX_HELD_AUDIO) this.held.push([ms, body]);
        return;
      }
      this.onTag(8, ms, body);
    }

    audio(pts, b) {
      for (let pos = 0, i = 0; pos + 7 <= b.length; i++) {
        if (b[pos] !== 0xFF || (b[pos + 1] & 0xF6) !== 0xF0) throw new Error("the audio is not AAC in ADTS");
        const headerSize = (b[pos + 1] & 1) ? 7 : 9;
        const frameSize = ((b[pos + 3] & 3) << 11) | (b[pos + 4] << 3) | (b[pos + 5] >> 5);
        if (frameSize <= headerSize || pos + frameSize > b.length) throw new Error("an ADTS frame that does not fit its PES");
        const profile = b[pos + 2] >> 6, rateIndex = (b[pos + 2] >> 2) & 0xF;
        const channels = ((b[pos + 2] & 1) << 2) | (b[pos + 3] >> 6);
        if (!AAC_RATES[rateIndex]) throw new Error("an ADTS header with no sample rate");
        const asc = new Uint8Array([((profile + 1) << 3) | (rateIndex >> 1), ((rateIndex & 1) << 7) | (channels << 3)]);
        const ts = this.ms((pts + Math.round(i * 1024 * 90000 / AAC_RATES[rateIndex])) % WRAP_33);
        if (asc.join() !== this.asc) {
          this.asc = asc.join();
          this.audioTag(ts, concat(new Uint8Array([0xAF, 0]), asc));
        }
        this.audioTag(ts, concat(new Uint8Array([0xAF, 1]), b.subarray(pos + headerSize, pos + frameSize)));
        pos += frameSize;
      }
    }
  }

  /** Hands frames on at the pace of their timestamps, so a segment that comes whole plays
   *  over its own duration (sound especially: the page schedules it a moment ahead only).
   *  The clock starts `slackMs` behind the first frame; a frame later than PACER_LATE_MS with
   *  nothing waiting starts it again so, at that frame (a stall: latency grows by it and the
   *  slack, so that segments listed and polled at varying moments rarely stall again). When
   *  more than `maxAheadMs` waits, the clock jumps ahead to keep `keepMs` (what waited is
   *  handed on at once). Frames go `leadMs` before their time (a media element keeps its own
   *  time and needs a little buffered). One queue per tag type, each in arrival (decode) order. */
  class Pacer {
    constructor(release, keepMs, maxAheadMs, leadMs = 0) {
      this.release = release;
      this.keepMs = keepMs;
      this.maxAheadMs = maxAheadMs;
      this.leadMs = leadMs;
      this.slackMs = 0;
      this.queues = { 8: [], 9: [] };
      this.offset = null;         // performance.now() - media time
      this.timer = null;
      this.stopped = false;
    }

    push(type, ts, data) {
      if (this.stopped) return;
      const now = performance.now();
      const idle = !this.queues[8].length && !this.queues[9].length;
      if (this.offset === null || (idle && ts < now - this.offset - PACER_LATE_MS)) this.offset = now - ts + this.slackMs;
      this.queues[type].push({ ts, data });
      const ahead = ts - (now - this.offset);
      if (ahead > this.maxAheadMs) this.offset -= ahead - this.keepMs;
      if (this.timer === null) this.run();
    }

    /** Whether nothing of tag `type` waits. */
    idle(type) {
      return !this.queues[type].length;
    }

    run() {
      this.timer = null;
      const clock = performance.now() - this.offset + this.leadMs;
      let next = Infinity;
      for (const type of [9, 8]) {
        const q = this.queues[type];
        while (!this.stopped && q.length && q[0].ts <= clock + 1) { const f = q.shift(); this.release(type, f.ts, f.data); }
        if (q.length) next = Math.min(next, q[0].ts);
      }
      if (next !== Infinity && !this.stopped) this.timer = setTimeout(() => this.run(), next - clock);
    }

    stop() {
      this.stopped = true;
      clearTimeout(this.timer);
      this.queues = { 8: [], 9: [] };
    }
  }

  // ---- fragmented MP4 for Media Source Extensions (ISO 14496-12), the fallback -------------

  /** The coded size in an SPS NAL unit (H.264 §7.3.2.1.1), cropping applied. */
  function spsSize(nal) {
    const b = [];
    let zeros = 0;
    for (let i = 1; i < nal.length; i++) {
      if (zeros >= 2 && nal[i] === 3) { zeros = 0; continue; }
      b.push(nal[i]);
      zeros = nal[i] === 0 ? zeros + 1 : 0;
    }
    let bit = 0;
    const u = (n) => {
      let v = 0;
      for (let i = 0; i < n; i++, bit++) {
        if ((bit >> 3) >= b.length) throw new Error("the SPS is too short");
        v = v * 2 + ((b[bit >> 3] >> (7 - (bit & 7))) & 1);
      }
      return v;
    };
    const ue = () => {
      let zerosBefore = 0;
      while (u(1) === 0) if (++zerosBefore > 31) throw new Error("the SPS is malformed");
      return (2 ** zerosBefore) - 1 + u(zerosBefore);
    };
    const se = () => { const k = ue(); return k & 1 ? (k + 1) / 2 : -k / 2; };
    const profile = u(8);
    u(16);
    ue();
    let chroma = 1;
    if ([100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].includes(profile)) {
      chroma = ue();
      if (chroma === 3) u(1);
      ue(); ue(); u(1);
      if (u(1)) {
        for (let i = 0; i < (chroma !== 3 ? 8 : 12); i++) {
          if (!u(1)) continue;
          let last = 8, next = 8;
          for (let j = 0; j < (i < 6 ? 16 : 64); j++) {
            if (next !== 0) next = (last + se() + 256) % 256;
            last = next === 0 ? last : next;
          }
        }
      }
    }
    ue();
    const pocType = ue();
    if (pocType === 0) ue();
    else if (pocType === 1) { u(1); se(); se(); const n = ue(); for (let i = 0; i < n; i++) se(); }
    ue(); u(1);
    const widthMbs = ue() + 1, heightMaps = ue() + 1, frameMbsOnly = u(1);
    if (!frameMbsOnly) u(1);
    u(1);
    let crop = [0, 0, 0, 0];
    if (u(1)) crop = [ue(), ue(), ue(), ue()];
    const cropX = chroma === 1 || chroma === 2 ? 2 : 1;
    const cropY = (chroma === 1 ? 2 : 1) * (2 - frameMbsOnly);
    return { width: widthMbs * 16 - (crop[0] + crop[1]) * cropX,
             height: (2 - frameMbsOnly) * heightMaps * 16 - (crop[2] + crop[3]) * cropY };
  }

  function box(type, ...parts) {
    const size = 8 + parts.reduce((n, p) => n + p.length, 0);
    const out = new Uint8Array(size);
    out.set(be(size, 4), 0);
    for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
    let pos = 8;
    for (const p of parts) { out.set(p, pos); pos += p.length; }
    return out;
  }

  /** `n` as `bytes` big-endian bytes (up to 8: above 2^32 through division). */
  function be(n, bytes) {
    const out = new Uint8Array(bytes);
    for (let i = bytes - 1; i >= 0; i--) { out[i] = n % 256; n = Math.floor(n / 256); }
    return out;
  }

  const full = (type, version, flags, ...parts) => box(type, new Uint8Array([version]), be(flags, 3), ...parts);
  const words = (...values) => concatAll(values.map((v) => be(v >>> 0, 4)));
  const zeros = (n) => new Uint8Array(n);
  const text = (t) => new Uint8Array(Array.from(t, (c) => c.charCodeAt(0)));
  const MATRIX = words(0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000);

  /** ftyp + moov of one track: video (an avcC record) or audio (an AudioSpecificConfig). */
  function initSegment(track) {
    const video = track.kind === "video";
    const entry = video
      ? box("avc1", zeros(6), be(1, 2), zeros(16), be(track.width, 2), be(track.height, 2),
            words(0x00480000, 0x00480000, 0), be(1, 2), zeros(32), be(0x18, 2), be(0xFFFF, 2), box("avcC", track.config))
      : box("mp4a", zeros(6), be(1, 2), zeros(8), be(track.channels, 2), be(16, 2), zeros(4), words(track.rate * 65536),
            full("esds", 0, 0, esDescriptor(track.config)));
    const stbl = box("stbl", full("stsd", 0, 0, words(1), entry), full("stts", 0, 0, words(0)), full("stsc", 0, 0, words(0)),
                     full("stsz", 0, 0, words(0, 0)), full("stco", 0, 0, words(0)));
    const media = video ? full("vmhd", 0, 1, zeros(8)) : full("smhd", 0, 0, zeros(4));
    const minf = box("minf", media, box("dinf", full("dref", 0, 0, words(1), full("url ", 0, 1))), stbl);
    const mdia = box("mdia", full("mdhd", 0, 0, words(0, 0, track.timescale, 0), be(0x55C4, 2), zeros(2)),
                     full("hdlr", 0, 0, words(0), text(video ? "vide" : "soun"), zeros(12), text("LiveLine\0")), minf);
    const tkhd = full("tkhd", 0, 7, words(0, 0, 1, 0, 0, 0, 0), be(0, 4), be(video ? 0 : 0x0100, 2), zeros(2), MATRIX,
                      words(track.width * 65536, track.height * 65536));
    const mvhd = full("mvhd", 0, 0, words(0, 0, 1000, 0, 0x00010000), be(0x0100, 2), zeros(10), MATRIX, zeros(24), words(2));
    const mvex = box("mvex", full("trex", 0, 0, words(1, 1, 0, 0, 0)));
    return concat(box("ftyp", text("isom"), words(1), text("isomavc1mp41")), box("moov", mvhd, box("trak", tkhd, mdia), mvex));
  }

  /** The esds box's ES_Descriptor around an AudioSpecificConfig (ISO 14496-1 §7.2.6.5). */
  function esDescriptor(asc) {
    const descriptor = (tag, ...parts) => {
      const body = concatAll(parts);
      return concatAll([new Uint8Array([tag, body.length]), body]);
    };
    return descriptor(3, be(1, 2), zeros(1),
                      descriptor(4, new Uint8Array([0x40, 0x15]), zeros(3), words(0, 0), descriptor(5, asc)),
                      descriptor(6, new Uint8Array([2])));
  }

  /** moof + mdat of one sample of track 1: its decode time and duration in the track's
   *  timescale, its composition offset, whether it is a sync sample. */
  function mediaSegment(sequence, sample) {
    const flags = sample.key ? 0x02000000 : 0x01010000;
    const trun = (offset) => full("trun", 1, 0xF01, words(1, offset, sample.duration, sample.data.length, flags, sample.cts));
    const traf = (offset) => box("traf", full("tfhd", 0, 0x020000, words(1)), full("tfdt", 1, 0, be(sample.decodeTime, 8)), trun(offset));
    const moofSize = box("moof", full("mfhd", 0, 0, words(sequence)), traf(0)).length;
    return concat(box("moof", full("mfhd", 0, 0, words(sequence)), traf(moofSize + 8)), box("mdat", sample.data));
  }

  // ---- the player ---------------------------------------------------------------------------

  const path = location.pathname.split("/").filter(Boolean);  // watch, app, stream
  const app = decodeURIComponent(path[1] || "live");
  const stream = decodeURIComponent(path[2] || "");
  const params = new URLSearchParams(location.search);
  const token = params.get("token");
  const transport = ["flv", "hls"].includes(params.get("transport")) ? params.get("transport") : "ws";
  // WebCodecs where the page may use it (a secure context: https or localhost); else, or
  // with ?decoder=mse, Media Source Extensions with fragmented MP4 made here.
  const webCodecs = !!(window.VideoDecoder && window.AudioDecoder);
  const useMSE = params.get("decoder") === "mse" || (!webCodecs && !!window.MediaSource);

  const stats = {
    app, stream, transport,
    state: "connecting",
    decoder: useMSE ? "mse" : "webcodecs",
    firstFrameMs: null,         // page load start → first picture drawn
    connectToFirstFrameMs: null,// the latest (re)connect → its first picture
    latencyMs: null,            // the latest picture's capture → drawn
    latencyAvgMs: null,         // mean over the last second's pictures
    fps: 0, bitrateKbps: 0,
    bufferMs: null,             // MSE only: media buffered ahead of what the element plays
    audioLevel: 0, audioLevelDb: -Infinity,
    sound: null,                // "on", or "blocked" until a click (the browser's autoplay rule)
    width: 0, height: 0,
    videoCodec: null, audioCodec: null,
    frames: 0, audioFrames: 0, bytes: 0,
    reconnects: 0, droppedFrames: 0,
    missedSegments: 0, hlsJumps: 0, // HLS: segments gone (404) when fetched; jumps to the newest after falling behind
    error: null,
    latencies: [],              // the last LATENCY_LOG pictures' latencies (ms)
    latencyCount: 0,            // pictures with a capture time since the page opened
  };
  window.livelineStats = stats;

  const canvas = document.getElementById("picture");
  const ctx2d = canvas.getContext("2d", { alpha: false, desynchronized: true });
  const $ = (id) => document.getElementById(id);
  $("name").textContent = app + "/" + stream;
  $("decoder").textContent = (useMSE ? "MSE" : "WebCodecs") + { ws: ", WebSocket", flv: ", HTTP-FLV", hls: ", HLS" }[transport];
  document.title = app + "/" + stream + " — LiveLine";

  let session = null;           // the current connection's state
  let attempt = 0;
  let audio = null;             // { ctx, playAt }
  let secondFrames = 0, secondBytes = 0, secondLatencySum = 0, secondLatencyCount = 0;
  let secondFirstPts = null, secondLastPts = null;
  let levelPeak = 0, levelAt = 0;

  function feedURL() {
    const q = token ? "?token=" + encodeURIComponent(token) : "";
    const name = encodeURIComponent(app) + "/" + encodeURIComponent(stream);
    if (transport !== "ws") return location.origin + "/" + name + { flv: ".flv", hls: ".m3u8" }[transport] + q;
    return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws/" + name + q;
  }

  function connect() {
    if (!webCodecs && !useMSE) {
      fail("this browser has neither WebCodecs nor Media Source Extensions");
      return;
    }
    const s = { closed: false, started: performance.now(), video: null, audio: null, lengthSize: 4,
                captureTimes: new Map(), waitingForKey: true, framesHere: 0 };
    if (useMSE) s.mse = new MSESink(s);
    session = s;
    setState(attempt === 0 ? "connecting" : "reconnecting");
    if (transport === "hls") { openHLS(s); return; }
    s.reader = new FLVReader((type, ts, data) => onTag(s, type, ts, data));
    if (transport === "flv") openFetch(s); else openSocket(s);
  }

  function openSocket(s) {
    const ws = new WebSocket(feedURL());
    ws.binaryType = "arraybuffer";
    s.close = () => ws.close();
    ws.onmessage = (e) => {
      if (s.closed || !(e.data instanceof ArrayBuffer)) return;
      received(s, new Uint8Array(e.data));
    };
    ws.onclose = () => ended(s, "the feed closed");
  }

  /** Hands a response's body to the session as it comes, until it ends or the session closes. */
  async function receiveBody(s, response) {
    const body = response.body.getReader();
    for (;;) {
      const { done, value } = await body.read();
      if (done || s.closed) break;
      received(s, value);
    }
  }

  function openFetch(s) {
    const abort = new AbortController();
    s.close = () => abort.abort();
    fetch(feedURL(), { signal: abort.signal, cache: "no-store" }).then(async (response) => {
      if (!response.ok) throw new Error("HTTP " + response.status);
      await receiveBody(s, response);
      ended(s, "the feed ended");
    }).catch((e) => ended(s, String(e.message || e)));
  }

  /** HLS: polls the media playlist every half target duration (at least 200 ms), joins at
   *  its newest segment and fetches each newer one once, in order, streaming it through the
   *  TS demuxer into FLV tag bodies paced by their timestamps. More than MAX_HLS_BEHIND
   *  segments newer than the one played: it jumps to the newest, as after a drop. A segment
   *  that answers 404 is skipped; the playlist failing ends the connection (and reconnects). */
  function openHLS(s) {
    const abort = new AbortController();
    const play = (type, ts, data) => guarded(s, () => onTag(s, type, ts, data));
    const pacer = new Pacer(play, 1000, 2000, useMSE ? MSE_LEAD_MS : 0);
    // A sequence header with nothing of its kind waiting goes at once: the first video and
    // audio ones then reach the page in one task (a media source takes its tracks only so).
    const paced = (type, ts, data) => (data[1] === 0 && pacer.idle(type) ? play(type, ts, data) : pacer.push(type, ts, data));
    const flv = new TSToFLV(paced, () => demuxer.has("video"));
    const demuxer = new TSDemuxer((kind, pts, dts, data) => flv.frame(kind, pts, dts, data));
    s.reader = demuxer;
    s.close = () => { abort.abort(); pacer.stop(); };
    const playlistURL = feedURL();
    const get = (url) => fetch(url, { signal: abort.signal, cache: "no-store" });
    const segment = async (uri) => {
      const response = await get(uri);
      if (response.status === 404) { stats.missedSegments++; return; }  // gone already: the next listed one
      if (!response.ok) throw new Error("a segment: HTTP " + response.status);
      await receiveBody(s, response);
      if (!s.closed) guarded(s, () => demuxer.end());
    };
    (async () => {
      let next = null;          // the next segment's media sequence number
      let pollAt = performance.now();
      while (!s.closed) {
        const response = await get(playlistURL);
        if (!response.ok) throw new Error("the playlist: HTTP " + response.status);
        const list = parsePlaylist(await boundedText(response, MAX_PLAYLIST_BYTES, "a playlist"), playlistURL);
        const poll = Math.max(200, list.targetDuration * 500);
        pacer.keepMs = list.targetDuration * 1000;
        pacer.maxAheadMs = pacer.keepMs + poll + 500;
        pacer.slackMs = poll / 2;
        const plan = hlsNext(list, next);
        if (plan.restart) flv.discontinuity();
        if (plan.jump) stats.hlsJumps++;
        next = plan.next;
        for (const seg of list.segments) {
          if (seg.sequence < next || s.closed) continue;
          if (seg.discontinuity) flv.discontinuity();
          await segment(seg.uri);
          next = seg.sequence + 1;
        }
        if (list.ended) throw new Error("the stream ended");
        // On a fixed beat (not a pause after each round): the polls keep their phase against
        // the segments' listing, where a pause would drift and the pacer would stall now and then.
        pollAt = Math.max(pollAt + poll, performance.now() - poll);
        await new Promise((resolve) => setTimeout(resolve, pollAt - performance.now()));
      }
    })().catch((e) => ended(s, String(e.message || e)));
  }

  /** The media sequence number of the next segment to fetch from `list`, having played up to
   *  `next` - 1 (`next` null: nothing yet, so the newest, the live end); `jump` when it goes to
   *  the newest because it fell more than MAX_HLS_BEHIND behind or its segments left the
   *  window, `restart` when the numbers went back (the stream started again: a new timeline). */
  function hlsNext(list, next) {
    if (!list.segments.length) return { next, jump: false, restart: false };
    const newest = list.segments[list.segments.length - 1].sequence;
    const restart = next !== null && next > newest + 1;
    if (next === null || restart || next < list.segments[0].sequence || newest - (next - 1) > MAX_HLS_BEHIND) {
      return { next: newest, jump: next !== null, restart };
    }
    return { next, jump: false, restart: false };
  }

  /** A response's body as text, refused past `max` bytes before it is all read. */
  async function boundedText(response, max, what) {
    const reader = response.body.getReader();
    const parts = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > max) {
        reader.cancel();
        throw new Error(what + " over the player's " + max + " bytes");
      }
      parts.push(value);
    }
    return new TextDecoder().decode(concatAll(parts));
  }

  function received(s, bytes) {
    stats.bytes += bytes.length;
    secondBytes += bytes.length;
    guarded(s, () => s.reader.push(bytes));
  }

  /** Runs `work` on the connection's bytes; an error in them ends the connection. */
  function guarded(s, work) {
    try {
      work();
    } catch (e) {
      stats.error = String(e.message || e);
      ended(s, stats.error);
    }
  }

  /** The connection is over: free its decoders and try again, sooner the first times. */
  function ended(s, why) {
    if (s.closed) return;
    s.closed = true;
    try { s.close(); } catch (_) { /* already closed */ }
    for (const d of [s.video, s.audio]) {
      if (d && d.state !== "closed") d.close();
    }
    if (s.mse) s.mse.close();
    if (session !== s) return;
    const delay = Math.min(5000, 250 * Math.pow(2, attempt));
    attempt += 1;
    stats.reconnects += s.framesHere > 0 ? 1 : 0;
    setState(stats.frames > 0 ? "reconnecting" : "waiting", why);
    setTimeout(connect, delay);
  }

  function onTag(s, type, ts, data) {
    if (type === 9) onVideo(s, ts, data);
    else if (type === 8) onAudio(s, ts, data);
  }

  function onVideo(s, ts, data) {
    if (data.length < 5) return;
    const frameType = data[0] >> 4;
    if ((data[0] & 0xF) !== 7) { fail("the stream's video is not H.264"); return; }
    const packetType = data[1];
    const cts = ((data[2] << 16) | (data[3] << 8) | data[4]) << 8 >> 8;  // SI24
    const body = data.subarray(5);
    if (s.mse) { s.mse.video(packetType, frameType === 1, ts, cts, body); return; }
    if (packetType === 0) {
      const codec = avcCodec(body);
      s.lengthSize = (body[4] & 3) + 1;
      if (s.video && s.video.state !== "closed") s.video.close();
      s.video = new VideoDecoder({ output: (frame) => draw(s, frame), error: (e) => ended(s, "video decoder: " + e.message) });
      s.video.configure({ codec, description: body.slice(), optimizeForLatency: true });
      s.waitingForKey = true;
      stats.videoCodec = codec;
      return;
    }
    if (packetType !== 1 || !s.video || s.video.state !== "configured") return;
    const key = frameType === 1;
    if (s.waitingForKey && !key) { stats.droppedFrames++; return; }
    if (s.video.decodeQueueSize > MAX_DECODE_QUEUE) {  // far behind: start again at the next keyframe
      s.waitingForKey = true;
      stats.droppedFrames++;
      return;
    }
    s.waitingForKey = false;
    const timestamp = (ts + cts) * 1000;
    remember(s, timestamp, captureTimeMicros(body, s.lengthSize));
    s.video.decode(new EncodedVideoChunk({ type: key ? "key" : "delta", timestamp, data: body }));
  }

  function remember(s, key, capture) {
    if (capture === null) return;
    s.captureTimes.set(key, capture);
    if (s.captureTimes.size > 256) s.captureTimes.delete(s.captureTimes.keys().next().value);
  }

  function draw(s, frame) {
    if (s.closed) { frame.close(); return; }
    if (canvas.width !== frame.displayWidth || canvas.height !== frame.displayHeight) {
      canvas.width = frame.displayWidth;
      canvas.height = frame.displayHeight;
    }
    stats.width = frame.displayWidth;
    stats.height = frame.displayHeight;
    ctx2d.drawImage(frame, 0, 0, canvas.width, canvas.height);
    const capture = s.captureTimes.get(frame.timestamp);
    s.captureTimes.delete(frame.timestamp);
    const pts = frame.timestamp / 1000;
    frame.close();
    shown(s, capture, performance.now(), pts);
  }

  /** Counts a picture on screen at `now` (performance.now() time), its presentation time
   *  `pts` (ms) and its latency. */
  function shown(s, capture, now, pts) {
    if (s.framesHere === 0) {
      stats.connectToFirstFrameMs = Math.round(now - s.started);
      if (stats.firstFrameMs === null) stats.firstFrameMs = Math.round(now);
      attempt = 0;
      setState("playing");
    }
    s.framesHere++;
    stats.frames++;
    secondFrames++;
    if (secondFirstPts === null || pts < secondFirstPts) secondFirstPts = pts;
    secondLastPts = Math.max(secondLastPts === null ? pts : secondLastPts, pts);
    if (capture !== undefined) {
      const latency = (performance.timeOrigin + now) - capture / 1000;
      stats.latencyMs = Math.round(latency);
      stats.latencies.push(Math.round(latency * 10) / 10);
      if (stats.latencies.length > LATENCY_LOG) stats.latencies.shift();
      stats.latencyCount++;
      secondLatencySum += latency;
      secondLatencyCount++;
    }
  }

  /** The MSE path: each FLV frame becomes a one-sample fMP4 fragment appended to a video or an
   *  audio SourceBuffer of a <video> element kept near the live edge; pictures are counted
   *  (and their latency taken) as the element presents them (requestVideoFrameCallback). */
  class MSESink {
    constructor(s) {
      this.s = s;
      this.element = $("player");
      this.element.hidden = false;
      canvas.hidden = true;
      this.source = new MediaSource();
      this.element.src = URL.createObjectURL(this.source);
      this.tracks = {};           // kind → { buffer, queue, sequence }
      this.pending = [];          // tracks made before the source opened
      this.source.addEventListener("sourceopen", () => { for (const t of this.pending.splice(0)) this.open(t); });
      this.timer = setInterval(() => this.chase(), 200);
      const frame = (now, meta) => {
        if (this.s.closed) return;
        stats.width = meta.width;
        stats.height = meta.height;
        const capture = this.s.captureTimes.get(Math.round(meta.mediaTime * 1000));
        shown(this.s, capture, meta.expectedDisplayTime || now, meta.mediaTime * 1000);
        this.element.requestVideoFrameCallback(frame);
      };
      if (this.element.requestVideoFrameCallback) this.element.requestVideoFrameCallback(frame);
      // The level is read from what the element plays (silent while it is muted).
      if (!audio) {
        const Ctx = window.AudioContext || window.webkitAudioContext;
        audio = { ctx: new Ctx({ latencyHint: "interactive" }), playAt: 0 };
      }
      if (!audio.element) {
        audio.element = audio.ctx.createMediaElementSource(this.element);
        audio.analyser = audio.ctx.createAnalyser();
        audio.analyser.fftSize = 2048;
        audio.element.connect(audio.analyser);
        audio.analyser.connect(audio.ctx.destination);
      }
      this.analyser = audio.analyser;
    }

    track(kind, mime, init) {
      if (this.tracks[kind]) return;  // a repeated sequence header: the first one stands
      const t = { kind, mime, queue: [init], sequence: 1, buffer: null };
      this.tracks[kind] = t;
      if (this.source.readyState === "open") this.open(t); else this.pending.push(t);
    }

    open(t) {
      t.buffer = this.source.addSourceBuffer(t.mime);
      t.buffer.mode = "segments";
      t.buffer.addEventListener("updateend", () => this.feed(t));
      this.feed(t);
    }

    feed(t) {
      if (!t.buffer || t.buffer.updating || !t.queue.length || this.s.closed) return;
      try {
        t.buffer.appendBuffer(t.queue.shift());
      } catch (e) {
        ended(this.s, "media source: " + e.message);
      }
    }

    append(t, sample) {
      t.queue.push(mediaSegment(t.sequence++, sample));
      if (t.queue.length > 300) { ended(this.s, "the media source fell behind"); return; }
      this.feed(t);
    }

    video(packetType, key, ts, cts, body) {
      if (packetType === 0) {
        const codec = avcCodec(body);
        this.s.lengthSize = (body[4] & 3) + 1;
        const spsLength = (body[6] << 8) | body[7];
        const size = spsSize(body.subarray(8, 8 + spsLength));
        stats.videoCodec = codec;
        this.track("video", 'video/mp4; codecs="' + codec + '"',
                   initSegment({ kind: "video", config: body.slice(), width: size.width, height: size.height, timescale: 1000 }));
        return;
      }
      const t = this.tracks.video;
      if (packetType !== 1 || !t) return;
      if (!t.started && !key) { stats.droppedFrames++; return; }
      t.started = true;
      remember(this.s, ts + cts, captureTimeMicros(body, this.s.lengthSize));
      // Sent at once with the last interval as its duration (waiting for the next frame's
      // time would add a frame of latency); the next fragment's decode time corrects it.
      const sample = { key, decodeTime: ts, cts, data: body.slice(), duration: t.interval || 33 };
      if (t.previous !== undefined) t.interval = Math.max(1, ts - t.previous);
      t.previous = ts;
      this.append(t, sample);
    }

    audio(packetType, ts, body) {
      if (packetType === 0) {
        const config = aacConfig(body);
        stats.audioCodec = config.codec + " " + config.sampleRate + " Hz " + config.numberOfChannels + " ch";
        this.rate = config.sampleRate;
        this.track("audio", 'audio/mp4; codecs="' + config.codec + '"',
                   initSegment({ kind: "audio", config: body.slice(), channels: config.numberOfChannels, rate: config.sampleRate,
                                 width: 0, height: 0, timescale: config.sampleRate }));
        return;
      }
      const t = this.tracks.audio;
      if (packetType !== 1 || !t) return;
      this.append(t, { key: true, decodeTime: Math.round(ts * this.rate / 1000), cts: 0, data: body.slice(), duration: 1024 });
    }

    /** Keeps the element playing near the live edge, and its buffers short. */
    chase() {
      const v = this.element;
      if (this.s.closed || !v.buffered.length) return;
      const end = v.buffered.end(v.buffered.length - 1);
      const lag = end - v.currentTime;
      stats.bufferMs = Math.round(lag * 1000);
      // HLS is paced to arrive MSE_LEAD_MS ahead: that much buffered is kept, not chased.
      const keep = transport === "hls" ? MSE_LEAD_MS / 1000 : 0;
      if (lag > 1 + keep || v.currentTime < v.buffered.start(0)) v.currentTime = Math.max(v.buffered.start(0), end - 0.1 - keep);
      v.playbackRate = lag > 0.15 + keep ? 1.1 : 1;
      if (this.analyser) {
        const samples = new Float32Array(this.analyser.fftSize);
        this.analyser.getFloatTimeDomainData(samples);
        let peak = 0;
        for (const x of samples) peak = Math.max(peak, Math.abs(x));
        const now = performance.now();
        if (peak >= levelPeak || now - levelAt > 250) { levelPeak = peak; levelAt = now; }
      }
      if (v.paused) v.play().catch(() => { v.muted = true; $("sound").hidden = false; v.play().catch(() => {}); });
      for (const t of Object.values(this.tracks)) {
        if (t.buffer && !t.buffer.updating && v.currentTime > 30 && t.buffer.buffered.length && t.buffer.buffered.start(0) < v.currentTime - 20) {
          t.buffer.remove(0, v.currentTime - 10);
        }
      }
    }

    close() {
      clearInterval(this.timer);
      this.element.removeAttribute("src");
      this.element.load();
    }
  }

  function onAudio(s, ts, data) {
    if (data.length < 2 || (data[0] >> 4) !== 10) return;  // AAC only
    const body = data.subarray(2);
    if (s.mse) { s.mse.audio(data[1], ts, body); return; }
    if (data[1] === 0) {
      const config = aacConfig(body);
      if (s.audio && s.audio.state !== "closed") s.audio.close();
      s.audio = new AudioDecoder({ output: (a) => play(s, a), error: (e) => ended(s, "audio decoder: " + e.message) });
      s.audio.configure(config);
      stats.audioCodec = config.codec + " " + config.sampleRate + " Hz " + config.numberOfChannels + " ch";
      return;
    }
    if (!s.audio || s.audio.state !== "configured") return;
    s.audio.decode(new EncodedAudioChunk({ type: "key", timestamp: ts * 1000, data: body }));
  }

  function play(s, data) {
    if (s.closed) { data.close(); return; }
    const channels = data.numberOfChannels, frames = data.numberOfFrames;
    const planes = [];
    let peak = 0;
    for (let c = 0; c < channels; c++) {
      const plane = new Float32Array(frames);
      data.copyTo(plane, { planeIndex: c, format: "f32-planar" });
      for (let i = 0; i < frames; i++) {
        const v = Math.abs(plane[i]);
        if (v > peak) peak = v;
      }
      planes.push(plane);
    }
    const rate = data.sampleRate;
    data.close();
    stats.audioFrames++;
    const now = performance.now();
    if (peak >= levelPeak || now - levelAt > 250) { levelPeak = peak; levelAt = now; }
    if (!audio) {
      const Ctx = window.AudioContext || window.webkitAudioContext;
      audio = { ctx: new Ctx({ latencyHint: "interactive" }), playAt: 0 };
    }
    const ac = audio.ctx;
    if (ac.state !== "running") { $("sound").hidden = false; return; }
    $("sound").hidden = true;
    const t = ac.currentTime;
    if (audio.playAt < t + 0.005) audio.playAt = t + AUDIO_LEAD_S;
    if (audio.playAt > t + AUDIO_MAX_AHEAD_S) return;  // behind: drop this piece so sound stays live
    const buffer = ac.createBuffer(channels, frames, rate);
    planes.forEach((p, c) => buffer.copyToChannel(p, c));
    const node = ac.createBufferSource();
    node.buffer = buffer;
    node.connect(ac.destination);
    node.start(audio.playAt);
    audio.playAt += frames / rate;
  }

  function setState(state, why) {
    stats.state = state;
    const text = { connecting: "connecting…", playing: "live", reconnecting: "reconnecting…",
                   waiting: "waiting for the stream…", error: "cannot play" }[state] || state;
    $("state").textContent = text + (why && state !== "playing" ? " (" + why + ")" : "");
    $("state").className = state;
  }

  /** Stops for good (nothing this page could play): says why, frees the connection. */
  function fail(message) {
    stats.error = message;
    const s = session;
    session = null;  // so ended() does not try again
    if (s) ended(s, message);
    setState("error", message);
  }

  $("sound").onclick = () => {
    if (audio) audio.ctx.resume();
    $("player").muted = false;
    $("sound").hidden = true;
  };
  document.addEventListener("click", () => { if (audio && audio.ctx.state !== "running") audio.ctx.resume(); });

  // Once a second: the rates, the level, and the figures on the page.
  setInterval(() => {
    // Pictures drawn in the last second, but no more than their own timestamps span: a page
    // joining draws the GOP cache's pictures at once, which is not a frame rate.
    const span = secondLastPts - secondFirstPts;
    stats.fps = secondFrames > 1 && span > 0 ? Math.min(secondFrames, Math.round((secondFrames - 1) * 1000 / span)) : secondFrames;
    secondFirstPts = secondLastPts = null;
    stats.bitrateKbps = Math.round(secondBytes * 8 / 1000);
    stats.latencyAvgMs = secondLatencyCount ? Math.round(secondLatencySum / secondLatencyCount) : null;
    secondFrames = secondBytes = secondLatencySum = secondLatencyCount = 0;
    if (performance.now() - levelAt > 1000) levelPeak = 0;
    stats.audioLevel = Math.round(levelPeak * 1000) / 1000;
    stats.audioLevelDb = levelPeak > 0 ? Math.round(20 * Math.log10(levelPeak) * 10) / 10 : -Infinity;
    // "on" when the browser lets the page play sound, "blocked" until a click allows it.
    stats.sound = !audio ? null : audio.ctx.state !== "running" || (useMSE && $("player").muted) ? "blocked" : "on";
    const ms = (v) => (v === null ? "–" : v + " ms");
    $("first").textContent = ms(stats.firstFrameMs);
    $("latency").textContent = ms(stats.latencyAvgMs === null ? stats.latencyMs : stats.latencyAvgMs);
    $("fps").textContent = stats.fps;
    $("bitrate").textContent = stats.bitrateKbps + " kbit/s";
    $("level").textContent = levelPeak > 0 ? stats.audioLevelDb.toFixed(1) + " dBFS" : "silent";
    $("meter").style.width = Math.max(0, Math.min(100, 100 + (levelPeak > 0 ? 20 * Math.log10(levelPeak) : -100) * 100 / 60)) + "%";
    $("size").textContent = stats.width ? stats.width + "×" + stats.height : "–";
  }, 1000);

  // For tests: the parsers without a socket.
  window.livelinePlayer = { FLVReader, captureTimeMicros, seiTime, avcCodec, aacConfig, spsSize, initSegment, mediaSegment,
                            parsePlaylist, hlsNext, TSDemuxer, TSToFLV, Pacer };
  connect();
})();
