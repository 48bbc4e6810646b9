import LiveCapture
import LiveCore
import LiveRTMP

/// A wrong command line: the message says what and the exit code is 2 (usage error).
struct UsageError: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// The arguments of one subcommand, consumed option by option; what is left at the
/// end is an error, so a typo never passes silently.
struct Arguments {
    private var items: [String]
    let command: String
    /// The names of the options taken so far: one left over after that was given twice.
    private var taken: Set<String> = []

    /// The options the command's help names, for "did you mean" on a typo.
    private let known: [String]

    /// `help`: the command's help text; the options it names are the ones suggested.
    init(_ items: [String], command: String, help: String = "") {
        self.items = items
        self.command = command
        known = Self.options(in: help)
    }

    /// The options a help text defines: the `--name` that starts each of its lines
    /// (mentions of other commands' options inside the prose do not count).
    static func options(in text: String) -> [String] {
        text.split(separator: "\n").compactMap { line -> String? in
            let word = line.drop { $0 == " " }.prefix { !$0.isWhitespace && $0 != "=" }
            return word.hasPrefix("--") && word.count > 2 ? String(word) : nil
        }
    }

    var wantsHelp: Bool { items.contains("--help") || items.contains("-h") }

    /// Removes `--name` and says whether it was there.
    mutating func flag(_ name: String) -> Bool {
        guard let i = items.firstIndex(of: name) else { return false }
        items.remove(at: i)
        taken.insert(name)
        return true
    }

    /// Whether `--name` or `--name=VALUE` is among the arguments (nothing is removed).
    func contains(_ name: String) -> Bool {
        items.contains { $0 == name || $0.hasPrefix(name + "=") }
    }

    /// Fails when one of `names` is given: they only mean something with `needed`,
    /// which is missing (`--accept` without `--line`).
    func reject(_ names: [String], without needed: String) throws {
        if let given = names.first(where: { contains($0) }) { throw UsageError("\(given) needs \(needed)") }
    }

    /// Removes `--name VALUE` (or `--name=VALUE`) and returns VALUE.
    mutating func value(_ name: String) throws -> String? {
        guard let i = items.firstIndex(where: { $0.hasPrefix(name + "=") }) ?? items.firstIndex(of: name) else {
            return nil
        }
        return try take(at: i)
    }

    /// Removes `items[i]` (an option `--name` or `--name=VALUE`) with its value and returns the value.
    private mutating func take(at i: Int) throws -> String {
        taken.insert(String(items[i].prefix { $0 != "=" }))
        if let equals = items[i].firstIndex(of: "=") {
            let value = String(items[i][items[i].index(after: equals)...])
            items.remove(at: i)
            return value
        }
        guard i + 1 < items.count, !(items[i + 1].hasPrefix("--") && items[i + 1].count > 2) else {
            throw UsageError("\(items[i]) needs a value")
        }
        let value = items[i + 1]
        items.removeSubrange(i...(i + 1))
        return value
    }

    /// Removes every `--name VALUE` (or `--name=VALUE`) and returns the values in the order given.
    mutating func values(_ name: String) throws -> [String] {
        var found: [String] = []
        while let i = items.firstIndex(where: { $0 == name || $0.hasPrefix(name + "=") }) {
            found.append(try take(at: i))
        }
        return found
    }

    /// A duration such as `30s`, `20m`, `1h` or `2d` (a bare number is seconds), in seconds.
    mutating func duration(_ name: String, in range: ClosedRange<Int64>) throws -> Int64? {
        guard let text = try value(name) else { return nil }
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        let unit = text.last.flatMap { units[$0] }
        let digits = unit == nil ? Substring(text) : text.dropLast()
        guard digits.allSatisfy(\.isASCII), let count = Int64(digits),
              case let (seconds, overflow) = count.multipliedReportingOverflow(by: unit ?? 1), !overflow,
              range.contains(seconds) else {
            throw UsageError("\(name) must be a duration like 30s, 20m, 1h or 2d, from \(range.lowerBound) s to \(range.upperBound) s, not '\(text)'")
        }
        return seconds
    }

    mutating func int(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = try value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("\(name) must be a whole number in \(range.lowerBound)...\(range.upperBound), not '\(text)'")
        }
        return number
    }

    mutating func double(_ name: String, in range: ClosedRange<Double>) throws -> Double? {
        guard let text = try value(name) else { return nil }
        guard let number = Double(text), number.isFinite, range.contains(number) else {
            throw UsageError("\(name) must be a number in \(range.lowerBound)...\(range.upperBound), not '\(text)'")
        }
        return number
    }

    /// `WxH`, each side even and within bounds.
    mutating func size(_ name: String) throws -> (width: Int, height: Int)? {
        guard let text = try value(name) else { return nil }
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]),
              (16...7680).contains(w), (16...4320).contains(h) else {
            throw UsageError("\(name) must look like 1280x720 (16x16 to 7680x4320), not '\(text)'")
        }
        guard w % 2 == 0, h % 2 == 0 else {
            throw UsageError("\(name) needs even width and height for I420, not '\(text)'")
        }
        return (w, h)
    }

    /// The remaining non-option arguments, in order.
    mutating func positionals() -> [String] {
        let rest = items.filter { !$0.hasPrefix("-") || $0 == "-" }
        items.removeAll { !$0.hasPrefix("-") || $0 == "-" }
        return rest
    }

    /// Fails on anything not consumed, saying why when it can: an option given twice,
    /// or a habit from tools that read a configuration file.
    func finish() throws {
        guard let first = items.first else { return }
        let name = String(first.prefix { $0 != "=" })
        if taken.contains(name) { throw UsageError("\(name) given twice; give each option once") }
        if Self.configFileOptions.contains(name) { throw Self.noConfigFile(given: name) }
        // An option of this command that nothing took: a flag given a value, or one that
        // only means something with another option.
        if known.contains(name) {
            throw UsageError(first.contains("=") ? "\(name) takes no value" : "\(name) does not apply with the other options given")
        }
        if let near = Self.nearest(to: name, among: known) {
            throw UsageError("unknown option '\(first)'; did you mean \(near)?")
        }
        throw UsageError("unknown option '\(first)'")
    }

    /// The option of `candidates` one or two edits away from `name` (a typo), if exactly
    /// one is nearest.
    static func nearest(to name: String, among candidates: [String]) -> String? {
        guard name.hasPrefix("-") else { return nil }
        let scored = candidates.map { ($0, editDistance(name, $0)) }.filter { $0.1 <= 2 }
        guard let best = scored.map(\.1).min() else { return nil }
        let nearest = scored.filter { $0.1 == best }
        return nearest.count == 1 ? nearest[0].0 : nil
    }

    /// Levenshtein distance: insertions, deletions and substitutions.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// What nginx, ffserver or a daemon's users reach for to hand over a settings file.
    static let configFileOptions: Set<String> = ["--config", "--conf", "--config-file", "-c"]

    /// There is no configuration file: every setting is an option. `given`: what was
    /// given instead (`--config`, or a file name).
    static func noConfigFile(given: String) -> UsageError {
        UsageError("'\(given)': there is no configuration file; every setting is an option on the command line")
    }

    /// `--source SPEC` checked as the sources read it: a spec that cannot name a source
    /// is a usage error; one that names a missing file or camera fails when it opens.
    mutating func source(_ name: String) throws -> String? {
        guard let text = try value(name) else { return nil }
        do {
            _ = try SourceSpec(parsing: text)
        } catch let error as LiveError {
            throw UsageError("\(name): \(error.detail)")
        }
        return text
    }

    /// The RTMP_URL argument; an unusable one is a usage error saying what is wrong
    /// (with its credentials hidden).
    static func rtmpURL(_ text: String) throws -> RTMPURL {
        do {
            return try RTMPURL(parsing: text)
        } catch {
            throw UsageError("\(error)")
        }
    }

    /// An `rtmp://` or HTTP-FLV `http://` URL to play; a usage error naming what is wrong.
    static func playURL(_ text: String) throws -> PlayURL {
        do {
            return try PlayURL(parsing: text)
        } catch let error as RTMPURL.Error {
            guard case .unsupportedScheme = error else { throw UsageError("\(error)") }
            throw UsageError("\(RTMPURL.redacted(text)) is not an rtmp:// or http:// URL")
        } catch {
            throw UsageError("\(error)")
        }
    }
}
