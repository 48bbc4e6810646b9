/// The web console's page (`WebConsole`): its HTML, style and script as text, put
/// together once when first served. Plain JavaScript, no framework, nothing from
/// elsewhere. The script publishes what it shows as `window.livelineConsole` (streams,
/// lines, refreshes, lastError, needsToken) for tests and scripts.
enum WebConsolePage {
    static let html = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>LiveLine relay</title>
        <style>/*STYLE*/</style>
        </head>
        <body>
        <header>
          <h1>LiveLine relay</h1>
          <span id="status" class="muted">loading…</span>
        </header>
        <form id="token-form" hidden>
          <label for="token">This relay needs an access token (<code>liveline token --api 'api/*'</code>):</label>
          <input id="token" type="password" autocomplete="off" placeholder="token">
          <button type="submit">Use token</button>
          <span id="token-message" class="error"></span>
        </form>
        <main>
          <section>
            <h2>Live streams <span id="stream-count" class="muted"></span></h2>
            <table id="streams">
              <thead><tr>
                <th>Stream</th><th>Video</th><th>Audio</th><th>Bitrate</th><th>Players</th>
                <th>Dropped</th><th>Frames</th><th>Live for</th><th>Cache</th><th>Publisher</th><th>Watch</th>
              </tr></thead>
              <tbody></tbody>
            </table>
            <p id="no-streams" class="muted" hidden>No stream is being published.</p>
          </section>
          <section>
            <h2>Living list <span id="line-count" class="muted"></span></h2>
            <table id="lines">
              <thead><tr>
                <th>Line</th><th>Hoster</th><th>Co-hosts</th><th>Members</th><th>Mode</th><th>Pull URL</th>
              </tr></thead>
              <tbody></tbody>
            </table>
            <p id="no-lines" class="muted" hidden>No line is open.</p>
          </section>
        </main>
        <footer class="muted">
          <span>Refreshed every second from <code>/api/streams</code> and <code>/api/live</code>.</span>
          <button id="forget" type="button" hidden>Forget token</button>
        </footer>
        <script>/*SCRIPT*/</script>
        </body>
        </html>

        """

    static let style = """
        body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f4f6f9; }
        header { display: flex; align-items: baseline; gap: 16px; padding: 12px 20px; background: #1d2330; color: #fff; }
        header h1 { font-size: 18px; margin: 0; }
        header .muted { color: #aab3c5; }
        main { padding: 8px 20px; }
        h2 { font-size: 16px; margin: 18px 0 8px; }
        table { border-collapse: collapse; width: 100%; background: #fff; box-shadow: 0 1px 2px #0002; }
        th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid #e3e7ee; vertical-align: top; }
        th { background: #e9edf3; font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
        td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
        .muted { color: #6b7588; font-size: 13px; }
        .error { color: #b3261e; }
        .tag { display: inline-block; padding: 0 6px; border-radius: 8px; background: #dfe8fb; font-size: 12px; }
        .tag.audio { background: #fbe9d7; }
        a { color: #1f5bd6; margin-right: 8px; }
        form { margin: 12px 20px; padding: 12px; background: #fff7e0; border: 1px solid #f0d68a; }
        form input { width: 28em; }
        footer { padding: 12px 20px; }
        code { font-size: 12px; }

        """

    static let script = """
        "use strict";
        (function () {
          const TOKEN_KEY = "liveline.token";
          const MAX_MEMBER_LOOKUPS = 20;
          const state = { streams: [], lines: [], refreshes: 0, lastError: null, needsToken: false };
          window.livelineConsole = state;
          const byId = (id) => document.getElementById(id);

          function el(tag, attributes, ...children) {
            const node = document.createElement(tag);
            for (const [key, value] of Object.entries(attributes || {})) {
              if (key === "class") node.className = value; else node.setAttribute(key, value);
            }
            for (const child of children) {
              node.append(child instanceof Node ? child : document.createTextNode(child == null ? "" : String(child)));
            }
            return node;
          }

          function token() { return sessionStorage.getItem(TOKEN_KEY); }

          class Refused extends Error {}

          async function api(path) {
            const headers = {};
            const current = token();
            if (current) headers.Authorization = "Bearer " + current;
            const response = await fetch(path, { headers: headers, cache: "no-store" });
            if (response.status === 401) {
              let reason = "";
              try { const body = await response.json(); reason = body.code + " " + body.message; } catch (e) {}
              throw new Refused(reason);
            }
            if (!response.ok) throw new Error(path + ": HTTP " + response.status);
            return response.json();
          }

          function pathOf(text) { return text.split("/").map(encodeURIComponent).join("/"); }

          function withToken(url) {
            const current = token();
            return current ? url + (url.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(current) : url;
          }

          function kbits(bits) { return bits == null ? "" : (bits / 1000).toFixed(0) + " kbit/s"; }

          function bytes(count) {
            if (count >= 1048576) return (count / 1048576).toFixed(1) + " MiB";
            if (count >= 1024) return (count / 1024).toFixed(0) + " KiB";
            return count + " B";
          }

          function duration(seconds) {
            if (seconds == null) return "";
            const s = Math.floor(seconds), h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60;
            const pad = (n) => String(n).padStart(2, "0");
            return h > 0 ? h + "h " + pad(m) + "m" : m + "m " + pad(s % 60) + "s";
          }

          function streamRow(stream) {
            const id = stream.app + "/" + stream.name;
            const base = "/" + pathOf(stream.app) + "/" + pathOf(stream.name);
            const video = stream.codec ? stream.codec + " " + (stream.width || "?") + "×" + (stream.height || "?")
              + " " + stream.fps.toFixed(1) + " fps" : "none yet";
            const audio = stream.audioCodec ? stream.audioCodec + " " + (stream.audioSampleRate || "?") + " Hz "
              + (stream.audioChannels === 1 ? "mono" : stream.audioChannels === 2 ? "stereo" : "") + " "
              + kbits(stream.audioBitrate) : "none";
            const links = el("td", {},
              el("a", { href: withToken("/watch" + base), "data-link": "watch" }, "watch"),
              el("a", { href: withToken(base + ".flv"), "data-link": "flv" }, ".flv"),
              el("a", { href: withToken(base + ".m3u8"), "data-link": "hls" }, ".m3u8"));
            return el("tr", { "data-stream": id },
              el("td", {}, el("strong", {}, id)),
              el("td", {}, video),
              el("td", {}, audio),
              el("td", { class: "num" }, kbits(stream.bitrate)),
              el("td", { class: "num" }, stream.players),
              el("td", { class: "num" }, stream.droppedFrames),
              el("td", { class: "num" }, stream.frames),
              el("td", { class: "num" }, duration(stream.publishedSeconds)),
              el("td", { class: "num" }, bytes(stream.cachedBytes)),
              el("td", {}, stream.publisher || el("span", { class: "muted" }, "waiting")),
              links);
          }

          function lineRow(line) {
            const mode = el("span", { class: line.isAudioLive ? "tag audio" : "tag" }, line.isAudioLive ? "audio" : "video");
            return el("tr", { "data-line": line.liveId || "" },
              el("td", {}, el("strong", {}, line.liveId || "(no id)")),
              el("td", {}, line.hoster || ""),
              el("td", {}, line.cohosts.length ? line.cohosts.join(", ") : el("span", { class: "muted" }, "none")),
              el("td", { class: "num" }, line.members),
              el("td", {}, mode),
              el("td", {}, line.pullURL ? el("code", {}, line.pullURL) : ""));
          }

          // One living list entry: the hoster's liveInfo (the anyRTC SDK's liveData), JSON or text.
          function lineOf(info, members) {
            const object = info && typeof info === "object" ? info : {};
            return {
              liveId: typeof object.liveTopic === "string" ? object.liveTopic : (typeof info === "string" ? info : ""),
              hoster: typeof object.hosterName === "string" ? object.hosterName : "",
              cohosts: [],
              members: members,
              isAudioLive: object.isAudioLive === 1 || object.isAudioLive === true,
              pullURL: typeof object.rtmpUrl === "string" ? object.rtmpUrl : "",
              info: info,
            };
          }

          async function addMembers(line) {
            if (!line.liveId) return;
            try {
              const page = await api("/api/live/" + encodeURIComponent(line.liveId) + "/members?size=100");
              const hoster = page.members.find((m) => m.role === "hoster");
              if (hoster) line.hoster = hoster.userId;
              line.cohosts = page.members.filter((m) => m.role === "cohost").map((m) => m.userId);
            } catch (error) {
              if (error instanceof Refused) throw error;
            }
          }

          function fill(table, rows, empty) {
            byId(table).tBodies[0].replaceChildren(...rows);
            byId(table).hidden = rows.length === 0;
            byId(empty).hidden = rows.length !== 0;
          }

          function showTokenForm(reason) {
            state.needsToken = true;
            byId("token-form").hidden = false;
            byId("token-message").textContent = token() ? "the token was refused" + (reason ? ": " + reason : "") : "";
            byId("status").textContent = "a token is needed";
          }

          let busy = false;
          async function refresh() {
            if (busy) return;
            busy = true;
            try {
              const [streams, live] = await Promise.all([api("/api/streams"), api("/api/live").catch((error) => {
                // A relay without lines has no /api/live.
                if (error instanceof Refused) throw error;
                return { LiveList: [], LiveMembers: [] };
              })]);
              const list = Array.isArray(live.LiveList) ? live.LiveList : [];
              const counts = Array.isArray(live.LiveMembers) ? live.LiveMembers : [];
              const lines = list.map((info, index) => lineOf(info, counts[index] || 0));
              await Promise.all(lines.slice(0, MAX_MEMBER_LOOKUPS).map(addMembers));
              state.streams = streams;
              state.lines = lines;
              state.refreshes += 1;
              state.lastError = null;
              state.needsToken = false;
              byId("token-form").hidden = true;
              byId("forget").hidden = !token();
              fill("streams", streams.map(streamRow), "no-streams");
              fill("lines", lines.map(lineRow), "no-lines");
              byId("stream-count").textContent = "(" + streams.length + ")";
              byId("line-count").textContent = "(" + lines.length + ")";
              byId("status").textContent = "updated " + new Date().toLocaleTimeString();
            } catch (error) {
              state.lastError = String(error.message || error);
              if (error instanceof Refused) showTokenForm(error.message);
              else byId("status").textContent = "cannot reach the relay: " + state.lastError;
            } finally {
              busy = false;
            }
          }

          byId("token-form").addEventListener("submit", (event) => {
            event.preventDefault();
            const value = byId("token").value.trim();
            if (value) sessionStorage.setItem(TOKEN_KEY, value);
            byId("token").value = "";
            refresh();
          });
          byId("forget").addEventListener("click", () => {
            sessionStorage.removeItem(TOKEN_KEY);
            refresh();
          });
          refresh();
          setInterval(refresh, 1000);
        })();

        """
}
