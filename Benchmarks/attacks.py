#!/usr/bin/env python3
"""Hostile clients against `liveline serve` (issue "access control and hardening").

Starts its own `liveline serve` on free loopback ports, runs each attack in turn and
prints one Markdown table row per attack: what the server answered, its RSS before the
attack, at the attack's peak and after it (the attacker gone, 1 s later), and whether a
legitimate client was still served (GET /healthz, and for the RTMP attacks a publish).
Attackers connect from other loopback addresses (127.0.x.y), so per-address limits see
many peers, as they would on a network.

Usage: python3 Benchmarks/attacks.py [--liveline PATH] [--only NAME,...] [--scale S]
  --liveline  the executable (default .build/release/liveline, built if missing)
  --scale     multiplies the attack sizes (default 1: the sizes the issue reports)
Everything stays on 127.0.0.0/8; every loop is bounded in count and time.
"""
import argparse, base64, json, os, random, re, select, shutil, socket, struct, subprocess, sys, tempfile, threading, time

# ---------------------------------------------------------------- the server

class Server:
    def __init__(self, binary, extra=()):
        self.proc = subprocess.Popen([binary, "serve", "--rtmp", "127.0.0.1:0", "--http", "127.0.0.1:0", *extra],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"rtmp://([\d.]+):(\d+) http://([\d.]+):(\d+)", line)
        if not m:
            raise SystemExit(f"liveline serve did not start: {line!r}")
        self.rtmp_port, self.http_port = int(m.group(2)), int(m.group(4))

    def rss_kb(self):
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except FileNotFoundError:
            return None
        return None

    def cpu_seconds(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.returncode


class Peak(threading.Thread):
    """Samples the server's RSS every 50 ms until stopped."""
    def __init__(self, server):
        super().__init__(daemon=True)
        self.server, self.peak, self.done = server, server.rss_kb() or 0, threading.Event()
        self.start()

    def run(self):
        while not self.done.wait(0.05):
            self.peak = max(self.peak, self.server.rss_kb() or 0)

    def stop(self):
        self.done.set()
        self.join()
        return self.peak


_source = [1]
def connect(port, timeout=5.0):
    """A TCP connection to 127.0.0.1:port from a fresh loopback source address."""
    _source[0] += 1
    n = _source[0]
    s = socket.socket()
    s.settimeout(timeout)
    s.bind((f"127.0.{(n // 250) % 250 + 1}.{n % 250 + 1}", 0))
    s.connect(("127.0.0.1", port))
    return s


def readable(s, wait):
    """select() for one socket, without select's 1024-descriptor limit."""
    p = select.poll()
    p.register(s, select.POLLIN | select.POLLHUP | select.POLLERR)
    return bool(p.poll(max(0.0, wait) * 1000))


def read_some(s, limit=1 << 16, wait=2.0):
    """What arrives within `wait` seconds, b'' on EOF, None on reset."""
    data, end = b"", time.time() + wait
    try:
        while time.time() < end and len(data) < limit:
            if not readable(s, end - time.time()):
                break
            chunk = s.recv(65536)
            if not chunk:
                return data or b""
            data += chunk
    except (ConnectionResetError, OSError):
        return data or None
    return data


def is_closed(s, wait=0.2):
    """True when the peer closed (EOF or reset) within `wait`; data that arrives is read and dropped."""
    if not readable(s, wait):
        return False
    timeout = s.gettimeout()
    s.setblocking(False)
    try:
        while True:
            if not s.recv(65536):
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        s.settimeout(timeout)


def http(port, path, method="GET", body=b"", headers=None, timeout=5.0):
    s = connect(port, timeout)
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {len(body)}\r\n"
    for k, v in (headers or {}).items():
        head += f"{k}: {v}\r\n"
    s.sendall(head.encode() + b"\r\n" + body)
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    s.close()
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else None
    return status, data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""


def healthy(server):
    try:
        t0 = time.time()
        status, _ = http(server.http_port, "/healthz", timeout=3)
        return status == 200, time.time() - t0
    except OSError:
        return False, None

# ---------------------------------------------------------------- RTMP

def amf(v):
    if v is None:
        return b"\x05"
    if isinstance(v, bool):
        return b"\x01" + bytes([v])
    if isinstance(v, (int, float)):
        return b"\x00" + struct.pack(">d", float(v))
    if isinstance(v, str):
        b = v.encode()
        return (b"\x02" + struct.pack(">H", len(b)) if len(b) < 65536 else b"\x0c" + struct.pack(">I", len(b))) + b
    if isinstance(v, dict):
        out = b"\x03"
        for k, x in v.items():
            kb = k.encode()
            out += struct.pack(">H", len(kb)) + kb + amf(x)
        return out + b"\x00\x00\x09"
    raise TypeError(v)


class RTMP:
    """Just enough of an RTMP client to misbehave: handshake, chunked writes, AMF0 commands."""
    def __init__(self, port, chunk=128):
        self.s = connect(port)
        self.chunk = 128
        self.s.sendall(b"\x03" + bytes(8) + os.urandom(1528))
        need, got = 1 + 1536 * 2, b""
        while len(got) < need:
            c = self.s.recv(need - len(got))
            if not c:
                raise ConnectionError("closed during the handshake")
            got += c
        self.s.sendall(got[1:1537])
        if chunk != 128:
            self.message(2, 1, 0, struct.pack(">I", chunk))
            self.chunk = chunk

    def message(self, csid, type_id, stream_id, payload, timestamp=0, length=None):
        length = len(payload) if length is None else length
        out = bytes([csid]) + struct.pack(">I", timestamp)[1:] + struct.pack(">I", length)[1:] + bytes([type_id]) + struct.pack("<I", stream_id)
        for i in range(0, max(1, len(payload)), self.chunk):
            if i:
                out += bytes([0xC0 | csid])
            out += payload[i:i + self.chunk]
        self.s.sendall(out)

    def command(self, name, tx, *args, stream_id=0):
        self.message(3 if stream_id == 0 else 8, 20, stream_id, amf(name) + amf(tx) + b"".join(amf(a) for a in args))

    def connect_app(self, app="live", tc_query=""):
        self.command("connect", 1, {"app": app, "tcUrl": f"rtmp://127.0.0.1/{app}{tc_query}", "flashVer": "LNX 9,0,124,2"})
        self.command("createStream", 2, None)

    def publish(self, name):
        self.connect_app()
        self.command("publish", 3, None, name, "live", stream_id=1)
        return read_some(self.s, wait=1.0)

    def play(self, name):
        self.connect_app()
        self.command("play", 3, None, name, stream_id=1)

    def video(self, payload, timestamp):
        self.message(6, 9, 1, payload, timestamp)


def avc_header():
    sps, pps = bytes.fromhex("6742c01e95a05000"), bytes.fromhex("68ce3c80")
    record = b"\x01\x42\xc0\x1e\xff\xe1" + struct.pack(">H", len(sps)) + sps + b"\x01" + struct.pack(">H", len(pps)) + pps
    return b"\x17\x00\x00\x00\x00" + record


def avc_frame(key, size):
    nal = (b"\x65" if key else b"\x41") + os.urandom(size)
    return (b"\x17" if key else b"\x27") + b"\x01\x00\x00\x00" + struct.pack(">I", len(nal)) + nal


def status_words(data):
    if data is None:
        return "connection reset"
    words = sorted(set(re.findall(rb"Net(?:Stream|Connection)\.[A-Za-z.]+", data)), key=data.find)
    return ", ".join(w.decode() for w in words) or ("closed" if data == b"" else f"{len(data)} bytes, no status")


def legit_publish(server, name="legit"):
    try:
        c = RTMP(server.rtmp_port)
        answer = c.publish(f"{name}{random.randrange(1 << 30)}")
        c.s.close()
        return answer is not None and b"NetStream.Publish.Start" in answer
    except OSError:
        return False

# ---------------------------------------------------------------- WebSocket (the line)

class WS:
    def __init__(self, port, path="/line"):
        self.s = connect(port)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                       f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            c = self.s.recv(1)
            if not c:
                raise ConnectionError("closed during the upgrade")
            head += c
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise ConnectionError(head.split(b"\r\n")[0].decode())
        self.buffer = b""

    def send(self, obj):
        data = json.dumps(obj).encode()
        mask = os.urandom(4)
        n = len(data)
        head = b"\x81" + (bytes([0x80 | n]) if n < 126 else b"\xfe" + struct.pack(">H", n) if n < 65536 else b"\xff" + struct.pack(">Q", n))
        self.s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def events(self, wait=1.0, until=None):
        """Text messages as dicts until `until(event)` is true or `wait` passes."""
        out, end = [], time.time() + wait
        while time.time() < end:
            while len(self.buffer) >= 2:
                n, off = self.buffer[1] & 0x7F, 2
                if n == 126:
                    if len(self.buffer) < 4: break
                    n, off = struct.unpack(">H", self.buffer[2:4])[0], 4
                elif n == 127:
                    if len(self.buffer) < 10: break
                    n, off = struct.unpack(">Q", self.buffer[2:10])[0], 10
                if len(self.buffer) < off + n:
                    break
                op, payload, self.buffer = self.buffer[0] & 0x0F, self.buffer[off:off + n], self.buffer[off + n:]
                if op == 1:
                    out.append(json.loads(payload))
                    if until and until(out[-1]):
                        return out
                elif op == 8:
                    out.append({"event": "close", "code": struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else None,
                                "reason": payload[2:].decode(errors="replace")})
                    return out
            if not readable(self.s, end - time.time()):
                continue
            try:
                c = self.s.recv(65536)
            except OSError:
                c = b""
            if not c:
                out.append({"event": "eof"})
                return out
            self.buffer += c
        return out

    def request(self, obj, wait=2.0):
        self.send(obj)
        ev = self.events(wait, until=lambda e: e.get("event") in ("reply", "close", "eof") and e.get("id", obj.get("id")) == obj.get("id"))
        return next((e for e in reversed(ev) if e.get("event") in ("reply", "close", "eof")), {"event": "none"}), ev


def open_line(server, live_id, user="host"):
    """A line opened as its hoster opens it: publish live/LIVE_ID with a lineKey nobody else
    sees, create with the same key (servers that do not ask for it ignore the fields).
    Returns (publisher, hoster WebSocket, the create's reply)."""
    key = base64.urlsafe_b64encode(os.urandom(12)).decode()
    publisher = RTMP(server.rtmp_port)
    publisher.publish(f"{live_id}?lineKey={key}")
    publisher.video(avc_header(), 0)
    host = WS(server.http_port)
    reply, _ = host.request({"op": "create", "id": 1, "liveId": live_id, "userId": user,
                             "stream": f"live/{live_id}", "lineKey": key})
    return publisher, host, reply


def reply_text(e):
    if e.get("event") == "reply":
        return f"code {e.get('code')}: {e.get('message')}"
    return f"{e.get('event')} {e.get('code', '')} {e.get('reason', '')}".strip()

# ---------------------------------------------------------------- attacks

ATTACKS = []
def attack(name, what, serve=()):
    """`serve`: extra `liveline serve` options for this attack's server."""
    def wrap(f):
        ATTACKS.append((name, what, tuple(serve), f))
        return f
    return wrap


@attack("members-page", "GET /api/live/ID/members?page=9223372036854775807 (and 1229782938247303442)")
def members_page(server, scale):
    answers = []
    for page in ("9223372036854775807", "1229782938247303442"):
        try:
            status, body = http(server.http_port, f"/api/live/nosuch/members?page={page}")
            answers.append(f"{status}")
        except OSError as e:
            answers.append(f"error {e}")
    return "HTTP " + ", ".join(answers) + " (no line)"


@attack("members-page-live", "the same pages on a line that exists")
def members_page_live(server, scale):
    pub, host, _ = open_line(server, "pages")
    answers = []
    for page in ("9223372036854775807", "1229782938247303442"):
        try:
            status, body = http(server.http_port, f"/api/live/pages/members?page={page}")
            answers.append(f"{status} {body[:60].decode(errors='replace')}")
        except OSError as e:
            answers.append(f"error {e}")
    host.s.close()
    pub.s.close()
    return "HTTP " + " / ".join(answers)


@attack("chunk-parking", "one RTMP connection parks 1 MB on each of 1000 chunk streams")
def chunk_parking(server, scale):
    n = int(1000 * scale)
    c = RTMP(server.rtmp_port, chunk=1 << 20)
    sent = 0
    try:
        for csid in range(4, 4 + n):
            if csid < 64:
                basic = bytes([csid])
            elif csid < 320:
                basic = bytes([0, csid - 64])
            else:
                basic = bytes([1]) + struct.pack("<H", csid - 64)
            header = basic + b"\x00\x00\x00" + struct.pack(">I", (1 << 20) + 16)[1:] + b"\x09" + struct.pack("<I", 1)
            c.s.sendall(header + bytes(1 << 20))
            sent += 1
    except OSError:
        pass
    answer = f"closed after {sent} of {n} chunk streams" if is_closed(c.s, 1.0) or sent < n else f"held all {n} ({sent} MB)"
    c.s.close()
    return answer


@attack("long-name", "play with an 8 MB AMF long-string name, 4 connections; then GET /metrics")
def long_name(server, scale):
    conns, answers = [], []
    for _ in range(4):
        c = RTMP(server.rtmp_port, chunk=1 << 20)
        c.connect_app()
        try:
            c.command("play", 3, None, "n" * 8_000_000, stream_id=1)
        except OSError:
            pass
        answers.append(status_words(read_some(c.s, wait=1.0)))
        conns.append(c)
    t0 = time.time()
    try:
        status, body = http(server.http_port, "/metrics", timeout=30)
        metrics = f"/metrics {status} in {time.time() - t0:.2f} s, {len(body)} bytes"
    except OSError as e:
        metrics = f"/metrics failed: {e}"
    for c in conns:
        c.s.close()
    return f"play: {answers[0] or 'no answer'}; {metrics}"


@attack("gop-cache", "4 streams, each a keyframe then 100 KB P-frames up to 7.5 MB, under the GOP cap (8 MiB)")
def gop_cache(server, scale):
    pubs, before = [], server.rss_kb()
    for i in range(4):
        c = RTMP(server.rtmp_port, chunk=1 << 16)
        answer = c.publish(f"gop{i}")
        if not answer or b"Publish.Start" not in answer:
            return f"publish refused: {status_words(answer)}"
        c.video(avc_header(), 0)
        c.video(avc_frame(True, 100_000), 0)
        for t in range(1, 75):
            c.video(avc_frame(False, 100_000), t * 33)
        pubs.append(c)
    time.sleep(1.0)
    grown = (server.rss_kb() - before) / 1024
    for c in pubs:
        c.s.close()
    return f"held; RSS +{grown:.1f} MB for 4 streams of 7.5 MB sent ({grown / 4:.1f} MB per stream)"


@attack("silent-players", "1000 silent RTMP players of a missing stream that never answer pings, on a server "
        "with --max-connections 1000; then a publisher", serve=("--max-connections", "1000"))
def silent_players(server, scale):
    n = int(1000 * scale)
    conns = []
    for _ in range(n):
        try:
            c = RTMP(server.rtmp_port)
            c.play("missing")
            conns.append(c)
        except OSError:
            break
    during = legit_publish(server)
    wait = server.idle + 5
    time.sleep(wait)
    open_after = sum(not is_closed(c.s, 0.01) for c in conns)
    after = legit_publish(server)
    for c in conns:
        c.s.close()
    return (f"{len(conns)} held; publisher served while held: {during}; still open after {wait:.0f} s: {open_after}; "
            f"publisher served then (the attackers still connected): {after}")


@attack("slow-headers", "500 HTTP connections that never finish their headers")
def slow_headers(server, scale):
    n, conns = int(500 * scale), []
    for _ in range(n):
        try:
            s = connect(server.http_port)
            s.sendall(b"GET /api/streams HTTP/1.1\r\nX-Slow: ")
            conns.append(s)
        except OSError:
            break
    ok, seconds = healthy(server)
    time.sleep(server.header_wait)
    closed = sum(is_closed(s, 0.01) for s in conns)
    for s in conns:
        s.close()
    return f"{len(conns)} opened; /healthz during: {ok}; closed by the server within {server.header_wait:.0f} s: {closed}"


@attack("partial-bodies", "600 POSTs announcing 1 MB bodies, each sending all but one byte")
def partial_bodies(server, scale):
    n, conns, answers = int(600 * scale), [], {}
    body = bytes((1 << 20) - 1)
    for _ in range(n):
        try:
            s = connect(server.http_port)
            s.sendall(b"POST /api/streams HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n")
            try:
                s.sendall(body)
            except OSError:
                pass
            conns.append(s)
        except OSError:
            break
    for s in conns[:20]:
        data = read_some(s, wait=0.2)
        key = (data or b"").split(b"\r\n")[0].decode(errors="replace") or "no answer"
        answers[key] = answers.get(key, 0) + 1
    for s in conns:
        s.close()
    return f"{len(conns)} sent; answers (first 20): " + ", ".join(f"{k} ×{v}" for k, v in answers.items())


@attack("line-spam", "a spammer in a room of 1000 silent members sends messages for 5 s; another room's round trip")
def line_spam(server, scale):
    n = int(1000 * scale)
    pub, host, r = open_line(server, "spam", user="spammer")
    if r.get("code") != 0:
        return f"create refused ({reply_text(r)})"
    members = []
    for i in range(n):
        try:
            m = WS(server.http_port)
            m.send({"op": "join", "id": 1, "liveId": "spam", "userId": f"m{i}"})
            members.append(m)
        except OSError:
            break
    other_pub, other, _ = open_line(server, "quiet", user="q")
    cpu0, t0, sent, trips, closed_at = server.cpu_seconds(), time.time(), 0, [], None
    while time.time() - t0 < 5:
        try:
            for _ in range(50):
                host.send({"op": "message", "id": 2, "userName": "s", "content": "x" * 1000})
                sent += 1
        except OSError:
            closed_at = sent
            break
        if sent % 500 == 0:
            t = time.time()
            reply, _ = other.request({"op": "heartbeat", "id": sent}, wait=5)
            trips.append(time.time() - t)
    cpu = server.cpu_seconds() - cpu0
    spammer = "closed after %d messages" % closed_at if closed_at is not None else (
        "closed" if is_closed(host.s, 0.5) else f"kept ({sent} sent)")
    for m in members + [host, other, pub, other_pub]:
        m.s.close()
    worst = max(trips) if trips else float("nan")
    return f"{len(members)} members; spammer {spammer}; server CPU {cpu:.1f} s in 5 s; other room's worst round trip {worst * 1000:.0f} ms"


@attack("live-info", "create with liveInfo `[1,]` and with a UTF-8 BOM, then GET /api/live")
def live_info(server, scale):
    answers = []
    for i, info in enumerate(["[1,]", "\ufeff{\"a\":1}"]):
        key = base64.urlsafe_b64encode(os.urandom(12)).decode()
        pub = RTMP(server.rtmp_port)
        pub.publish(f"info{i}?lineKey={key}")
        w = WS(server.http_port)
        r, _ = w.request({"op": "create", "id": 1, "liveId": f"info{i}", "userId": "h", "liveInfo": info,
                          "stream": f"live/info{i}", "lineKey": key})
        answers.append(reply_text(r))
    status, body = http(server.http_port, "/api/live")
    try:
        json.loads(body)
        valid = "valid JSON"
    except ValueError:
        valid = "INVALID JSON"
    return f"create: {answers[0]} / {answers[1]}; /api/live {status}, {valid}"


@attack("metadata-numbers", "onMetaData with framerate NaN, width 1e300, height -inf, then GET /api/streams")
def metadata_numbers(server, scale):
    c = RTMP(server.rtmp_port)
    answer = c.publish("meta")
    if not answer or b"Publish.Start" not in answer:
        return f"publish refused: {status_words(answer)}"
    data = amf("@setDataFrame") + amf("onMetaData") + amf({"framerate": float("nan"), "width": 1e300, "height": float("-inf"),
                                                           "videodatarate": float("inf")})
    c.message(5, 18, 1, data)
    c.video(avc_header(), 0)
    c.video(avc_frame(True, 1000), 0)
    time.sleep(0.3)
    try:
        status, body = http(server.http_port, "/api/streams")
        json.loads(body)
        result = f"/api/streams {status}, valid JSON"
    except (OSError, ValueError) as e:
        result = f"/api/streams failed: {e}"
    c.s.close()
    return result


@attack("takeover-same-query", "a second publisher of a live stream with the same query string")
def takeover(server, scale):
    first = RTMP(server.rtmp_port)
    a1 = first.publish("owned?key=1")
    first.video(avc_header(), 0)
    second = RTMP(server.rtmp_port)
    a2 = second.publish("owned?key=1")
    third = RTMP(server.rtmp_port)
    a3 = third.publish("owned")
    still = not is_closed(first.s, 0.3)
    for c in (first, second, third):
        c.s.close()
    return f"same query: {status_words(a2)}; no query: {status_words(a3)}; first publisher still connected: {still}"


@attack("line-squat", "create the line of a live id nobody publishes; join as the host's userId; a guest's accept and close")
def line_squat(server, scale):
    squatter = WS(server.http_port)
    r, _ = squatter.request({"op": "create", "id": 1, "liveId": "squat", "userId": "evil"})
    squat = reply_text(r)
    pub, host, r = open_line(server, "owned2")
    created = reply_text(r)
    guest = WS(server.http_port)
    r, _ = guest.request({"op": "join", "id": 1, "liveId": "owned2", "userId": "host"})
    twice = reply_text(r)
    guest2 = WS(server.http_port)
    guest2.request({"op": "join", "id": 1, "liveId": "owned2", "userId": "g2"})
    r, _ = guest2.request({"op": "close", "id": 2})
    close = reply_text(r)
    for c in (squatter, host, guest, guest2):
        c.s.close()
    pub.s.close()
    return f"squat: {squat}; the hoster's own create: {created}; join as host: {twice}; guest's close: {close}"


@attack("cohost-listing", "is a co-host's pubId stream listed in /api/streams or /metrics?")
def cohost_listing(server, scale):
    pub, host, r = open_line(server, "room")
    guest = WS(server.http_port)
    guest.request({"op": "join", "id": 1, "liveId": "room", "userId": "g"})
    guest.send({"op": "apply", "id": 2})
    app = [e for e in host.events(2, until=lambda e: e.get("event") == "application") if e.get("event") == "application"]
    if not app:
        return f"no application reached the hoster ({reply_text(r)})"
    host.send({"op": "accept", "id": 2, "peerId": app[0]["peerId"]})
    res = [e for e in guest.events(2, until=lambda e: e.get("event") == "applicationResult") if e.get("event") == "applicationResult"]
    if not res or not res[0].get("pubId"):
        return "not accepted"
    pub_id, query = res[0]["pubId"], res[0].get("publishQuery", "")
    co = RTMP(server.rtmp_port)
    co.publish(f"{pub_id}?{query}")
    co.video(avc_header(), 0)
    time.sleep(0.3)
    _, streams = http(server.http_port, "/api/streams")
    _, metrics = http(server.http_port, "/metrics")
    listed = [where for where, body in (("/api/streams", streams), ("/metrics", metrics)) if pub_id.encode() in body]
    host.send({"op": "hangup", "id": 3, "peerId": app[0]["peerId"]})
    ended = is_closed(co.s, 2.0)
    for c in (host, guest):
        c.s.close()
    co.s.close()
    pub.s.close()
    return f"listed in: {', '.join(listed) or 'neither'}; co-host's publish ended by the server after hang-up: {ended}"


SECRET = os.path.join(tempfile.mkdtemp(prefix="liveline-attacks-"), "secret")


def mint(binary, sub, *permissions, ttl="10m"):
    out = subprocess.run([binary, "token", "--secret-file", SECRET, "--sub", sub, *permissions, "--ttl", ttl],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


@attack("no-token", "with --auth-secret-file: publish, play, take over, call the API and open a line without the "
        "right token", serve=("--auth-secret-file", SECRET))
def no_token(server, scale):
    binary = server.binary
    good = mint(binary, "alice", "--publish", "live/room1")
    other = mint(binary, "mallory", "--publish", "live/other", "--play", "live/*")
    answers = []
    c = RTMP(server.rtmp_port)
    answers.append("publish, no token: " + status_words(c.publish("room1")))
    c.s.close()
    c = RTMP(server.rtmp_port)
    answers.append("publish, forged signature: " + status_words(c.publish("room1?token=" + good[:-2] + ("AA" if not good.endswith("AA") else "BB"))))
    c.s.close()
    owner = RTMP(server.rtmp_port)
    answers.append("owner: " + status_words(owner.publish("room1?token=" + good)))
    owner.video(avc_header(), 0)
    thief = RTMP(server.rtmp_port)
    answers.append("takeover with another path's token: " + status_words(thief.publish("room1?token=" + other)))
    answers.append(f"owner still connected: {not is_closed(owner.s, 0.3)}")
    viewer = RTMP(server.rtmp_port)
    viewer.play("room1")
    answers.append("play, no token: " + status_words(read_some(viewer.s, wait=1.0)))
    status, body = http(server.http_port, "/api/streams")
    answers.append(f"/api/streams without a bearer: {status} {body[:60].decode(errors='replace')}")
    status, _ = http(server.http_port, "/api/streams", headers={"Authorization": "Bearer " + mint(binary, "ops", "--api", "api/*")})
    answers.append(f"with an api token: {status}")
    w = WS(server.http_port)
    r, _ = w.request({"op": "create", "id": 1, "liveId": "room1", "userId": "mallory"})
    answers.append("line create without a token: " + reply_text(r))
    for sock in (thief.s, viewer.s, owner.s, w.s):
        sock.close()
    return "; ".join(answers)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--liveline", default=".build/release/liveline")
    ap.add_argument("--only", default="")
    ap.add_argument("--scale", type=float, default=1.0)
    args = ap.parse_args()
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    if not os.path.exists(args.liveline):
        subprocess.run(["swift", "build", "-c", "release", "--product", "liveline"], check=True)
    import resource
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    help_text = subprocess.run([args.liveline, "serve", "--help"], capture_output=True, text=True).stdout
    extra, idle, header_wait = [], 30.0, 15.0
    if "--auth-secret-file" in help_text:
        subprocess.run([args.liveline, "token", "--new-secret", SECRET], check=True, capture_output=True)
    if "--idle-timeout" in help_text:
        extra += ["--idle-timeout", "5"]
        idle = 5.0
    wanted = set(filter(None, args.only.split(",")))
    print(f"liveline: {args.liveline}  serve options: {' '.join(extra) or '(defaults)'}  scale: {args.scale}")
    print()
    print("| attack | what the server answered | RSS before → peak → after (MB) | legit client after | server |")
    print("|---|---|---|---|---|")
    for name, what, serve, run in ATTACKS:
        if wanted and name not in wanted:
            continue
        if "--auth-secret-file" in serve and "--auth-secret-file" not in help_text:
            print(f"| {name}: {what} | (this build has no access control) | | | |", flush=True)
            continue
        server = Server(args.liveline, extra + list(serve))
        server.binary = args.liveline
        server.idle, server.header_wait = idle, header_wait
        time.sleep(0.3)
        before = server.rss_kb()
        peak = Peak(server)
        try:
            answer = run(server, args.scale)
        except Exception as e:  # the attack's own failure is a result too: say it
            answer = f"attack stopped: {type(e).__name__}: {e}"
        top = peak.stop()
        time.sleep(1.0)
        after = server.rss_kb()
        ok, _ = healthy(server) if server.alive() else (False, None)
        legit = ("/healthz ok" if ok else "/healthz FAILED") + (", publish ok" if server.alive() and legit_publish(server) else ", publish FAILED")
        state = "running" if server.alive() else f"DIED (exit {server.proc.returncode})"
        rss = f"{before / 1024:.0f} → {top / 1024:.0f} → {after / 1024:.0f}" if after else f"{before / 1024:.0f} → {top / 1024:.0f} → gone"
        print(f"| {name}: {what} | {answer} | {rss} | {legit} | {state} |", flush=True)
        server.stop()


if __name__ == "__main__":
    main()
