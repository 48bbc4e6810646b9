#!/usr/bin/env python3
"""The table and the plot of Benchmarks/network.sh, from the files a run left in DIR.

    network-report.py DIR SCHEDULE[,SCHEDULE…] SENDER[,SENDER…]

For each SCHEDULE-SENDER run, DIR holds:
  RUN.capacity  "UNIX_SECONDS KBIT" per step of the link's schedule (scripts/netns-link)
  RUN.latency   the guest's --latency-log: "WALL_MICROS CAPTURE_MICROS LATENCY_MS" per frame
  RUN.guest     the guest's --stats json lines, each after "UNIX_SECONDS " (when it came)
  RUN.host      the same of `liveline host --stats json` (LiveLine's runs only)

A dip is a step below the schedule's first rate. Per run, over all its dips:
  p50/p95/max   glass-to-glass of the frames shown during the dips
  lost          frames captured during the dips and never shown (30 fps expected)
  < 200 ms      glass-to-glass back under 200 ms: from the drop to the first frame
                that starts a whole second of frames all under 200 ms (the worst dip;
                "never" when no such second comes in the dip)
  last ≥ 200    from the drop to the last frame shown at 200 ms or more in the dip (a
                later spike, a probe's, counts: the worst dip; "never" when the dip's
                last second still has a median of 200 ms or more)
  bitrate back  from the capacity's return to the first second whose encoded bitrate,
                averaged with the next second's, is within 10 % of the configured one
                (the worst dip; "never" when not before the next dip or the end;
                the ABR run only: with --abr off and ffmpeg the encoder's bitrate
                stays where it was set)
Writes DIR/table.md (also printed) and DIR/network.png.
"""
import json
import statistics
import sys

FPS = 30
TARGET_KBPS = 2500
BOUND_MS = 200
LABELS = {"abr": "liveline host (ABR)", "abr-off": "liveline host --abr off", "ffmpeg": "ffmpeg … -f flv (plain push)"}
COLORS = {"abr": "tab:green", "abr-off": "tab:orange", "ffmpeg": "tab:red"}


def stamped_json(path):
    rows = []
    try:
        for line in open(path):
            wall, _, text = line.partition(" ")
            if text.startswith("{"):
                rows.append((float(wall), json.loads(text)))
    except FileNotFoundError:
        pass
    return rows


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def load(directory, run):
    steps = [(float(w), int(k)) for w, k in (line.split() for line in open(f"{directory}/{run}.capacity"))]
    frames = []
    try:
        for line in open(f"{directory}/{run}.latency"):
            wall, capture, latency = line.split()
            frames.append((int(wall) / 1e6, int(capture) / 1e6, float(latency)))
    except FileNotFoundError:
        pass
    return steps, frames, stamped_json(f"{directory}/{run}.guest"), stamped_json(f"{directory}/{run}.host")


def dips(steps):
    full = steps[0][1]
    out = []
    for i, (start, kbit) in enumerate(steps):
        if kbit < full and i + 1 < len(steps):
            out.append((start, steps[i + 1][0]))
    return out


def figures(steps, frames, host, sender):
    windows = dips(steps)
    shown = [f for f in frames if any(a <= f[0] < b for a, b in windows)]
    latencies = [f[2] for f in shown]
    lost = 0
    recoveries, firsts, returns = [], [], []
    for index, (start, end) in enumerate(windows):
        # The bitrate has until the next dip (or the end of the run) to come back.
        until = windows[index + 1][0] if index + 1 < len(windows) else float("inf")
        captured = sum(1 for f in frames if start <= f[1] < end)
        lost += max(0, round((end - start) * FPS) - captured)
        in_dip = [f for f in frames if start <= f[0] < end]
        over = [f[0] for f in in_dip if f[2] >= BOUND_MS]
        tail = [f[2] for f in in_dip if f[0] >= end - 1]
        if tail and statistics.median(tail) >= BOUND_MS:
            recoveries.append(None)
        else:
            recoveries.append(max(over) - start if over else 0.0)
        first = None
        for i, f in enumerate(in_dip):
            second = [g for g in in_dip[i:] if g[0] < f[0] + 1]
            if f[0] + 1 <= end and all(g[2] < BOUND_MS for g in second):
                first = f[0] - start
                break
        firsts.append(first)
        if sender != "abr":
            continue  # the encoder's bitrate stays where it was set
        seconds = [(w, s["bitrateKbps"]) for w, s in host if s.get("event") == "stats" and end <= w < until]
        back = None
        for (w, kbps), (_, following) in zip(seconds, seconds[1:]):
            if (kbps + following) / 2 >= 0.9 * TARGET_KBPS:
                back = w - end
                break
        returns.append(back)
    return {
        "frames": len(latencies),
        "p50": percentile(latencies, 50) if latencies else None,
        "p95": percentile(latencies, 95) if latencies else None,
        "max": max(latencies) if latencies else None,
        "lost": lost,
        "recovery": None if None in recoveries else max(recoveries, default=0.0),
        "first": None if None in firsts else max(firsts, default=0.0),
        "bitrateBack": None if None in returns else max(returns, default=0.0),
    }


def cell(value, fmt, never="never"):
    return never if value is None else fmt % value


def table(directory, schedules, senders):
    lines = ["| schedule | sender | frames in dips | p50 ms | p95 ms | max ms | frames lost | < 200 ms after (s) | last ≥ 200 ms (s) | bitrate back (s) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for schedule in schedules:
        for sender in senders:
            run = f"{schedule}-{sender}"
            steps, frames, _, host = load(directory, run)
            f = figures(steps, frames, host, sender)
            back = cell(f["bitrateBack"], "%.1f") if sender == "abr" else "— (fixed)"
            lines.append(f"| {schedule} | {LABELS[sender]} | {f['frames']} | {cell(f['p50'], '%.0f', '—')} | "
                         f"{cell(f['p95'], '%.0f', '—')} | {cell(f['max'], '%.0f', '—')} | {f['lost']} | "
                         f"{cell(f['first'], '%.1f')} | {cell(f['recovery'], '%.1f')} | {back} |")
    return "\n".join(lines)


def plot(directory, schedules, senders):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(schedules), figsize=(7 * len(schedules), 8), sharex="col", squeeze=False)
    for column, schedule in enumerate(schedules):
        top, bottom = axes[0][column], axes[1][column]
        capacity_drawn = False
        for sender in senders:
            run = f"{schedule}-{sender}"
            steps, frames, guest, host = load(directory, run)
            t0 = steps[0][0]
            if not capacity_drawn:
                xs = [w - t0 for w, _ in steps] + [max([f[0] for f in frames] or [steps[-1][0]]) - t0]
                ys = [k for _, k in steps] + [steps[-1][1]]
                bottom.step(xs, ys, where="post", color="black", linewidth=2, label="link capacity")
                for a, b in dips(steps):
                    top.axvspan(a - t0, b - t0, color="0.9")
                capacity_drawn = True
            top.plot([f[0] - t0 for f in frames], [max(f[2], 1) for f in frames], ".", markersize=2,
                     color=COLORS[sender], label=LABELS[sender])
            # Up to the last frame shown: a guest outlives the stream by a while.
            last = max([f[0] for f in frames] or [t0])
            received = [(w - t0, s["receiveKbps"]) for w, s in guest if s.get("event") == "stats" and w <= last + 1]
            bottom.plot([x for x, _ in received], [y for _, y in received], color=COLORS[sender],
                        label=f"{LABELS[sender]}: received by the guest")
            if sender != "ffmpeg":
                encoded = [(w - t0, s["bitrateKbps"]) for w, s in host if s.get("event") == "stats"]
                bottom.plot([x for x, _ in encoded], [y for _, y in encoded], "--", color=COLORS[sender],
                            label=f"{LABELS[sender]}: encoded")
        top.axhline(BOUND_MS, color="0.5", linestyle=":", linewidth=1)
        top.set_yscale("log")
        top.set_ylabel("glass-to-glass latency per frame (ms, log)")
        top.set_title(f"schedule {schedule} (dips shaded)")
        top.legend(loc="upper left", fontsize=8, markerscale=4)
        bottom.set_ylabel("kbit/s")
        bottom.set_xlabel("seconds since the schedule started")
        bottom.legend(loc="upper right", fontsize=7)
    fig.tight_layout()
    path = f"{directory}/network.png"
    fig.savefig(path, dpi=110)
    return path


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    directory, schedules, senders = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
    text = table(directory, schedules, senders)
    open(f"{directory}/table.md", "w").write(text + "\n")
    print(text)
    print(f"plot: {plot(directory, schedules, senders)}")


if __name__ == "__main__":
    main()
