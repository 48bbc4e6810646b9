#!/usr/bin/python3
"""Glass-to-glass latency and first-frame time of LiveLine's watch page in headless Chromium.

    browser-latency.py URL SECONDS [--skip S] [--joins N]

URL is a watch page (http://127.0.0.1:8080/watch/live/x, or with ?transport=flv for
HTTP-FLV through fetch()). First it opens the page N times (--joins, default 3) on the
running stream and notes each first-frame time (page load start → first picture drawn, the
page's livelineStats.firstFrameMs); then it keeps the last page open for SECONDS and collects
the latency of every picture it draws (capture-time SEI → drawn on the canvas, the page's
livelineStats.latencies), leaving out the first S seconds after the first picture (--skip,
default 2: the GOP cache's older frames arrive at once when a page joins). Prints one latency
per line in ms on stdout and a summary line of JSON on stderr:
{"frames", "p50", "p95", "max", "firstFrameMs": [...], "connectToFirstFrameMs": [...]}.

Runs with Debian's python3 (python3-websocket) and the DevTools driver in Tests/Browser.
Exit 0 with at least one latency, 1 when the page did not play.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "Browser"))
import cdp  # noqa: E402


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description="Latency and first frame of the watch page in Chromium.")
    parser.add_argument("url")
    parser.add_argument("seconds", type=float)
    parser.add_argument("--skip", type=float, default=2)
    parser.add_argument("--joins", type=int, default=3)
    args = parser.parse_args()

    first_frames, connect_frames, latencies = [], [], []
    browser = cdp.start()
    try:
        for _ in range(max(1, args.joins)):
            browser.open("about:blank")
            browser.open(args.url)
            browser.wait_for("window.livelineStats && livelineStats.firstFrameMs !== null", 15)
            stats = browser.evaluate("livelineStats")
            first_frames.append(stats["firstFrameMs"])
            connect_frames.append(stats["connectToFirstFrameMs"])
        time.sleep(args.skip)
        seen = browser.evaluate("livelineStats.latencyCount")
        deadline = time.monotonic() + args.seconds
        while time.monotonic() < deadline:
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
            count, log = browser.evaluate("[livelineStats.latencyCount, livelineStats.latencies]")
            new = min(count - seen, len(log))  # the page keeps its last 1000
            for value in log[len(log) - new:]:
                latencies.append(value)
                print(value, flush=True)
            seen = count
    except (TimeoutError, cdp.CDPError) as e:
        print(f"browser-latency: {e}", file=sys.stderr)
        return 1
    finally:
        browser.close()
    if not latencies:
        print("browser-latency: no picture carried a capture time", file=sys.stderr)
        return 1
    print(json.dumps({"frames": len(latencies), "p50": percentile(latencies, 50), "p95": percentile(latencies, 95),
                      "max": max(latencies), "firstFrameMs": first_frames,
                      "connectToFirstFrameMs": connect_frames}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
