#!/usr/bin/python3
"""Opens the relay's web console in headless Chromium and checks that it lists a stream
and a line; prints one JSON object (what the page showed) on stdout, and the screenshot's
path on stderr.

    console_check.py URL STREAM LINE COHOST SCREENSHOT [TOKEN]

URL the console (http://127.0.0.1:PORT/), STREAM "app/name", LINE a live id, COHOST a
co-host's user id ("" when none is expected), SCREENSHOT where the PNG goes. With TOKEN the
page must first ask for one (auth on); a wrong token is typed into its form first (the
page must say it was refused), then TOKEN.
Exit status 0 when everything was seen, 1 otherwise (the JSON says what was missing)."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402


def main():
    url, stream, line, cohost, screenshot = sys.argv[1:6]
    token = sys.argv[6] if len(sys.argv) > 6 else None
    result = {"ok": False}
    browser = cdp.start()
    try:
        browser.open(url)
        if token:
            browser.wait_for("window.livelineConsole && livelineConsole.needsToken", 10)
            result["askedForToken"] = browser.evaluate("!document.getElementById('token-form').hidden")
            submit = ("document.getElementById('token').value = %s; "
                      "document.getElementById('token-form').requestSubmit(); true")
            # A wrong token first: the page says it was refused, with the relay's reason.
            browser.evaluate(submit % json.dumps("not.a.token"))
            result["refusal"] = browser.wait_for(
                "document.getElementById('token-message').textContent.includes('refused') && "
                "document.getElementById('token-message').textContent", 5)
            browser.evaluate(submit % json.dumps(token))
        row = "document.querySelector('[data-stream=%s]')" % json.dumps(stream)
        line_row = "document.querySelector('[data-line=%s]')" % json.dumps(line)
        condition = "%s && %s" % (row, line_row)
        if cohost:
            condition += " && %s.textContent.includes(%s)" % (line_row, json.dumps(cohost))
        # Streams figures come from the relay's last second: wait for a bitrate too.
        condition += " && livelineConsole.streams.some(s => s.app + '/' + s.name === %s && s.bitrate > 0)" % json.dumps(stream)
        browser.wait_for(condition, 15)
        result["state"] = browser.evaluate("livelineConsole")
        result["streamRow"] = browser.evaluate("%s.innerText" % row)
        result["lineRow"] = browser.evaluate("%s.innerText" % line_row)
        result["links"] = browser.evaluate("Array.from(%s.querySelectorAll('a')).map(a => a.getAttribute('href'))" % row)
        refreshes = result["state"]["refreshes"]
        browser.wait_for("livelineConsole.refreshes >= %d" % (refreshes + 2), 5)
        result["refreshesAfterTwoSeconds"] = browser.evaluate("livelineConsole.refreshes") - refreshes
        result["console"] = [str(m) for m in getattr(browser, "console", [])][-20:]
        browser.screenshot(screenshot)
        result["screenshot"] = screenshot
        result["ok"] = True
    except Exception as error:  # the JSON carries the failure to the Swift test
        result["error"] = str(error)
        try:
            result["state"] = browser.evaluate("window.livelineConsole || null")
            result["console"] = [str(m) for m in getattr(browser, "console", [])][-20:]
            browser.screenshot(screenshot)
            result["screenshot"] = screenshot
        except Exception as second:
            result["screenshotError"] = str(second)
    finally:
        browser.close()
    print(json.dumps(result))
    print("screenshot: %s" % screenshot, file=sys.stderr)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
