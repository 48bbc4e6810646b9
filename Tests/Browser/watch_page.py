#!/usr/bin/python3
"""Opens LiveLine's watch page in headless Chromium and reports what it shows.

    watch_page.py URL SCREENSHOT [--timeout S] [--settle S] [--reconnect | --no-play S] [--insecure-host NAME]

Waits for the first picture, then for the page's own figures (a latency from the
capture-time SEI, frames per second, an audio level), and --settle S seconds more (the
figures of a page that joined a moment ago, e.g. at an HLS segment), takes a screenshot of the tab to
SCREENSHOT and prints one JSON line: {"stats": window.livelineStats without its latency log,
"pixel": [r, g, b] at the middle of the picture in the screenshot, "screenshot": path,
"decoderLabel": what the page's bar says of its decoder and transport}.

With --reconnect it then reads one line from stdin (the caller drops the feed meanwhile,
e.g. by restarting the server) and waits until the page has reconnected by itself and drawn
new pictures, then prints a second JSON line the same way (screenshot SCREENSHOT with
"-reconnected" before its extension). Exit 0 when every wait was met, 1 (with the page's
console on stderr) when one timed out.

With --no-play S it checks the opposite (a feed that refuses the page): after S seconds no
picture has been drawn; it prints the stats and the screenshot the same way, exit 0.
"""

import argparse
import json
import os
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402  (next to this file)

STATS = "(() => { const s = Object.assign({}, window.livelineStats); delete s.latencies; return s; })()"
PICTURE_MIDDLE = """(() => {
  const r = document.querySelector('#picture:not([hidden]), #player:not([hidden])').getBoundingClientRect();
  return [Math.round((r.left + r.width / 2) * devicePixelRatio), Math.round((r.top + r.height / 2) * devicePixelRatio)];
})()"""


def report(browser, path):
    stats = browser.evaluate(STATS)
    browser.screenshot(path)
    x, y = browser.evaluate(PICTURE_MIDDLE)
    pixel = cdp.png_pixel(path, x, y)
    label = browser.evaluate("document.getElementById('decoder').textContent")
    print(json.dumps({"stats": stats, "pixel": list(pixel), "screenshot": path, "decoderLabel": label}), flush=True)
    return stats


def main():
    parser = argparse.ArgumentParser(description="Opens the watch page and reports its figures.")
    parser.add_argument("url")
    parser.add_argument("screenshot")
    parser.add_argument("--timeout", type=float, default=15)
    parser.add_argument("--settle", type=float, default=0, metavar="S",
                        help="seconds to wait once the page plays before its figures are read")
    parser.add_argument("--reconnect", action="store_true")
    parser.add_argument("--no-play", type=float, metavar="S")
    parser.add_argument("--insecure-host", metavar="NAME",
                        help="open URL with its host renamed NAME, resolved to 127.0.0.1: a page that is not a "
                             "secure context (as over plain http to another machine), so it has no WebCodecs")
    args = parser.parse_args()

    url = args.url
    chromium_args = []
    if args.insecure_host:
        parts = urllib.parse.urlsplit(url)
        url = urllib.parse.urlunsplit(parts._replace(netloc=f"{args.insecure_host}:{parts.port}"))
        chromium_args.append(f"--host-resolver-rules=MAP {args.insecure_host} 127.0.0.1")
    browser = cdp.start(chromium_args)
    try:
        browser.open(url)
        if args.no_play is not None:
            time.sleep(args.no_play)
            stats = report(browser, args.screenshot)
            if stats["frames"] > 0:
                print("watch_page: the page played", file=sys.stderr)
                return 1
            return 0
        browser.wait_for("window.livelineStats && livelineStats.firstFrameMs !== null", args.timeout)
        # The figures come once a second; the tone's level and a latency need a moment.
        browser.wait_for("livelineStats.latencyMs !== null && livelineStats.fps > 0 && livelineStats.audioLevel > 0",
                         args.timeout)
        time.sleep(args.settle)
        first = report(browser, args.screenshot)
        if args.reconnect:
            sys.stdin.readline()
            frames = browser.evaluate("livelineStats.frames")
            browser.wait_for(f"livelineStats.reconnects > {first['reconnects']} && livelineStats.state === 'playing'"
                             f" && livelineStats.frames > {frames} + 10 && livelineStats.fps > 0 && livelineStats.audioLevel > 0",
                             args.timeout)
            base, ext = os.path.splitext(args.screenshot)
            report(browser, f"{base}-reconnected{ext}")
    except (TimeoutError, cdp.CDPError) as e:
        print(f"watch_page: {e}", file=sys.stderr)
        print("watch_page: the page said:\n  " + "\n  ".join(browser.console[-30:]), file=sys.stderr)
        return 1
    finally:
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
