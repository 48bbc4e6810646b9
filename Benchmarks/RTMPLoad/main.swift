import Foundation
import Glibc
import LiveCore
import LiveNet
import LiveRTMP

// rtmp-load: N RTMP players (no decoding) against one stream; see `usage`.

let usage = """
usage: rtmp-load URL [options]
  -n, --players N        players (default 100)
  --ramp R               players started per second (default 200)
  --duration S           seconds after the last player started (default 20); the
                         measurement window is the last S - settle of them
  --settle S             seconds after the last start before measuring (default 2)
  --loops N              event loop threads (default: one per CPU this process may use)
  --max-lag-ms MS        keep-up bound on a player's lag (default 1000)
  --published FILE       the FLV recording the publisher loops (ffmpeg -re -stream_loop -1
                         -i FILE -c copy): each player counts its frames against it
  --json                 print the summary as one JSON object
  --players-json FILE    write every player's figures to FILE (JSON array)
A player keeps up when, over the measurement window, every frame arrived: with
--published, the frames it received from its first keyframe in the window to its last
are as many as the recording has between those two keyframes (keyframes are known by
their length, the recording looped as the publisher loops it), and at least one whole
GOP was counted; its media time grew by at least 90% of the wall time since its first
frame; its lag (arrival behind the media clock, relative to its most punctual frame)
stayed under --max-lag-ms; and its connection stayed open. Without --published frames
are not counted, and keeping up is judged on the rest alone.
"""

struct Options {
    var url = ""
    var players = 100
    var ramp = 200.0
    var duration = 20.0
    var settle = 2.0
    var loops = cpusAllowed()
    var bounds = PlayerResult.Bounds()
    var json = false
    var playersJSON: String?
    var published: String?

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        func value(_ name: String) throws -> String {
            guard let next = rest.popFirst() else { throw LoadError.usage("\(name) needs a value\n\(usage)") }
            return next
        }
        func number(_ name: String) throws -> Double {
            let text = try value(name)
            guard let number = Double(text), number > 0 else { throw LoadError.usage("\(name): \(text) is not a positive number") }
            return number
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "-n", "--players": players = Int(try number(argument))
            case "--ramp": ramp = try number(argument)
            case "--duration": duration = try number(argument)
            case "--settle": settle = try number(argument)
            case "--loops": loops = Int(try number(argument))
            case "--max-lag-ms": bounds.maxLagMicros = Int64(try number(argument) * 1000)
            case "--published": published = try value(argument)
            case "--json": json = true
            case "--players-json": playersJSON = try value(argument)
            case "-h", "--help": throw LoadError.usage(usage)
            default:
                guard url.isEmpty, !argument.hasPrefix("-") else { throw LoadError.usage("unknown argument \(argument)\n\(usage)") }
                url = argument
            }
        }
        guard !url.isEmpty else { throw LoadError.usage(usage) }
    }
}

/// The CPUs this process may run on (taskset): the default loop count.
func cpusAllowed() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) else { return 1 }
    let mask = line.dropFirst("Cpus_allowed:".count).filter { $0.isHexDigit }
    return max(1, mask.reduce(0) { $0 + (Int(String($1), radix: 16) ?? 0).nonzeroBitCount })
}

/// User + system CPU seconds of this process.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

/// The nearest-rank percentile of sorted values.
func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
    return sorted[min(sorted.count - 1, max(0, rank - 1))]
}

func spread(_ values: [Double]) -> [String: Double] {
    ["p50": percentile(values, 50), "p95": percentile(values, 95), "max": values.last ?? 0]
}

func run() throws -> Int32 {
    let options = try Options(Array(CommandLine.arguments.dropFirst()))
    let url = try RTMPURL(parsing: options.url)
    let published = try options.published.map { try PublishedStream(path: $0) }
    var bounds = options.bounds
    bounds.countFrames = published != nil
    signal(SIGPIPE, SIG_IGN)
    let group = try EventLoopGroup(count: options.loops, name: "rtmp-load")
    let cpuStart = cpuSeconds()
    let wallStart = Clock.monotonicMicros()
    let rampMicros = Double(options.players - 1) / options.ramp * 1e6
    let measureFrom = wallStart + UInt64(rampMicros + min(options.settle, options.duration / 2) * 1e6)
    let players = (0..<options.players).map { index in
        LoadPlayer(url: url, loop: group.loops[index % group.loops.count], measureFromMicros: measureFrom, published: published)
    }
    for (index, player) in players.enumerated() {
        let due = wallStart + UInt64(Double(index) / options.ramp * 1e6)
        let now = Clock.monotonicMicros()
        if due > now { usleep(useconds_t(due - now)) }
        _ = player.loop.execute { player.start(connectTimeout: .seconds(10)) }
    }
    let rampedMicros = Clock.monotonicMicros()
    let cpuRamped = cpuSeconds()
    usleep(useconds_t(options.duration * 1e6))
    let endMicros = Clock.monotonicMicros()
    let cpuEnd = cpuSeconds()
    for loop in group.loops {
        let stopped = DispatchSemaphore(value: 0)
        let mine = players.filter { $0.loop === loop }
        if !loop.execute({ for player in mine { player.stop() }; stopped.signal() }) { continue }
        stopped.wait()
    }
    group.shutdown()

    let results = players.map(\.result)
    let connected = results.filter { $0.playMicros > 0 }.count
    let failed = results.filter { $0.failure != nil }
    let keptUp = results.filter { $0.keptUp(endMicros: endMicros, bounds: bounds) }.count
    let firstFrames = results.filter { $0.frames > 0 }.map { Double($0.firstFrameMicros) / 1000 }.sorted()
    let lags = results.filter { $0.windowFrames > 0 }.map { Double($0.maxLagMicros) / 1000 }.sorted()
    let plays = results.filter { $0.playMicros > 0 }.map { Double($0.playMicros) / 1000 }.sorted()
    let gaps = results.filter { $0.windowFrames > 0 }.map { Double($0.maxGapMicros) / 1000 }.sorted()
    let measured = Double(endMicros - rampedMicros) / 1e6
    let toolCPU = (cpuEnd - cpuRamped) / measured * 100
    let toolCPUWithRamp = (cpuEnd - cpuStart) / (Double(endMicros - wallStart) / 1e6) * 100
    let bytes = results.reduce(0) { $0 + $1.bytes }
    let frames = results.reduce(0) { $0 + $1.frames }
    let counted = results.reduce(0) { $0 + $1.countedFrames }
    let publishedFrames = results.reduce(0) { $0 + $1.publishedFrames }
    let missing = results.filter { $0.missingFrames > 0 || $0.unknownKeyframes > 0 }.count
    var reasons: [String: Int] = [:]
    for result in failed { reasons[result.failure ?? "", default: 0] += 1 }

    let summary: [String: Any] = [
        "url": options.url, "players": options.players, "loops": options.loops,
        "connected": connected, "failed": failed.count, "keptUp": keptUp,
        "playStartMs": spread(plays), "firstFrameMs": spread(firstFrames), "lagMs": spread(lags), "maxGapMs": spread(gaps),
        "bytes": bytes, "frames": frames,
        "framesCounted": published != nil, "countedFrames": counted, "publishedFrames": publishedFrames,
        "missingFrames": publishedFrames - counted, "playersMissingFrames": missing,
        "measuredSeconds": measured,
        "toolCPUPercent": toolCPU,
        "toolCPUPercentWithRamp": toolCPUWithRamp,
        "failures": reasons,
    ]
    if let path = options.playersJSON {
        let list: [[String: Any]] = results.map { result in
            var entry: [String: Any] = [:]
            entry["playMs"] = Double(result.playMicros) / 1000
            entry["firstFrameMs"] = Double(result.firstFrameMicros) / 1000
            entry["bytes"] = result.bytes
            entry["frames"] = result.frames
            entry["keyframes"] = result.keyframes
            entry["countedFrames"] = result.countedFrames
            entry["publishedFrames"] = result.publishedFrames
            entry["unknownKeyframes"] = result.unknownKeyframes
            entry["maxGapMs"] = Double(result.maxGapMicros) / 1000
            entry["maxMediaGapMs"] = result.maxMediaGapMilliseconds
            entry["lagMs"] = Double(result.lagMicros) / 1000
            entry["maxLagMs"] = Double(result.maxLagMicros) / 1000
            entry["mediaSpanMs"] = Double(result.mediaSpanMicros) / 1000
            entry["keptUp"] = result.keptUp(endMicros: endMicros, bounds: bounds)
            entry["failure"] = result.failure ?? NSNull()
            return entry
        }
        try JSONSerialization.data(withJSONObject: list, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
    }
    if options.json {
        let data = try JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    } else {
        func row(_ values: [Double]) -> String {
            String(format: "p50 %.0f  p95 %.0f  max %.0f ms", percentile(values, 50), percentile(values, 95), values.last ?? 0)
        }
        print("players \(options.players) on \(options.loops) loop(s): connected \(connected), failed \(failed.count), keeping up \(keptUp)")
        print("play start   \(row(plays))")
        print("first frame  \(row(firstFrames))")
        print("lag          \(row(lags))")
        print("largest gap  \(row(gaps))")
        print(String(format: "received %.1f MB, %d frames in %.1f s; tool CPU %.1f%% of a core",
                     Double(bytes) / 1e6, frames, measured, toolCPU))
        if published != nil {
            print("frames counted in whole GOPs: \(counted) received of \(publishedFrames) published; \(missing) player(s) missed frames")
        } else {
            print("frames not counted against the publisher (no --published)")
        }
        for (reason, count) in reasons.sorted(by: { $0.value > $1.value }) { print("  \(count)× \(reason)") }
    }
    return keptUp == options.players ? 0 : 1
}

do {
    exit(try run())
} catch let error as LoadError {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data("rtmp-load: \(error)\n".utf8))
    exit(2)
}
