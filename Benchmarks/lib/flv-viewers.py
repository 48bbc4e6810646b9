#!/usr/bin/env python3
"""N HTTP-FLV (or WebSocket FLV) viewers against one stream, reading and discarding.

usage: flv-viewers.py URL N SECONDS [--ramp R]

URL is http://HOST:PORT/APP/STREAM.flv, or ws://HOST:PORT/ws/APP/STREAM for the
WebSocket feed (the upgrade is sent by hand; frames are counted as bytes). The viewers
start at R per second (default 250), then all read for SECONDS more. Prints one JSON object: viewers, answered (status 200 or 101), closed early, and the
bytes each received (min, median, max).
"""
import base64
import json
import os
import selectors
import socket
import sys
import time


def main():
    args = sys.argv[1:]
    if len(args) < 3 or args[0] in ("-h", "--help"):
        print(__doc__, file=sys.stderr)
        return 2
    url, count, seconds = args[0], int(args[1]), float(args[2])
    ramp = 250.0
    rest = args[3:]
    while rest:
        name = rest.pop(0)
        if name == "--ramp" and rest:
            ramp = float(rest.pop(0))
        else:
            print(f"flv-viewers.py: unknown argument {name}\n{__doc__}", file=sys.stderr)
            return 2
    websocket = url.startswith("ws://")
    if not (websocket or url.startswith("http://")):
        print("flv-viewers.py: the URL must start with http:// or ws://", file=sys.stderr)
        return 2
    authority, _, path = url.split("://", 1)[1].partition("/")
    host, _, port = authority.rpartition(":")
    address = (host, int(port))
    if websocket:
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET /{path} HTTP/1.1\r\nHost: {authority}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: {key}\r\n\r\n").encode()
    else:
        request = f"GET /{path} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode()

    selector = selectors.DefaultSelector()
    viewers = []  # [socket, head bytes or None once answered, status, bytes received, open]
    buffer = bytearray(1 << 18)
    view = memoryview(buffer)

    def read(viewer):
        sock = viewer[0]
        try:
            got = sock.recv_into(view)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            got = 0
        if got == 0:
            viewer[4] = False
            selector.unregister(sock)
            sock.close()
            return
        viewer[3] += got
        if viewer[1] is not None:
            viewer[1] += bytes(view[:got])
            end = viewer[1].find(b"\r\n\r\n")
            if end >= 0:
                viewer[2] = int(viewer[1].split(b" ", 2)[1])
                viewer[3] = len(viewer[1]) - end - 4
                viewer[1] = None

    def pump(timeout):
        for key, _ in selector.select(timeout):
            read(key.data)

    start = time.monotonic()
    for index in range(count):
        due = start + index / ramp
        while time.monotonic() < due:
            pump(max(0.0, due - time.monotonic()))
        sock = socket.create_connection(address)
        sock.sendall(request)
        sock.setblocking(False)
        viewer = [sock, b"", 0, 0, True]
        viewers.append(viewer)
        selector.register(sock, selectors.EVENT_READ, viewer)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pump(0.05)
    received = sorted(v[3] for v in viewers)
    answered = sum(1 for v in viewers if v[2] in (200, 101))
    print(json.dumps({
        "viewers": count, "answered": answered, "closed_early": sum(1 for v in viewers if not v[4]),
        "bytes_min": received[0] if received else 0, "bytes_median": received[len(received) // 2] if received else 0,
        "bytes_max": received[-1] if received else 0,
    }))
    for viewer in viewers:
        if viewer[4]:
            viewer[0].close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
