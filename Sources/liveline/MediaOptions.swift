import LiveLine

/// Options several commands read the same way: `--stats json`, what a publisher captures
/// and encodes (`host`, `guest --apply`, `call`), and where a play writes what it decodes
/// (`guest`, `call`).
extension Arguments {
    /// `--stats json`: whether JSON lines were asked for (json is the only value).
    mutating func statsJSON() throws -> Bool {
        guard let stats = try value("--stats") else { return false }
        guard stats == "json" else { throw UsageError("--stats accepts only 'json', not '\(stats)'") }
        return true
    }

    /// `--source`, `--size`, `--fps` and `--bitrate` into `c`; returns the bitrate when
    /// it was given (the host bounds its adaptive bitrate by it).
    @discardableResult
    mutating func picture(into c: inout HosterConfiguration) throws -> Int? {
        if let source = try source("--source") { c.source = source }
        if let size = try size("--size") { (c.width, c.height) = size }
        if let fps = try int("--fps", in: 1...60) { c.fps = fps }
        let bitrate = try int("--bitrate", in: 50...50_000)
        if let bitrate { c.bitrateKbps = bitrate }
        return bitrate
    }

    /// `--duration SECONDS` as `host`, `guest` and `call` take it (a fraction allowed).
    mutating func seconds(_ name: String = "--duration") throws -> Double? {
        try double(name, in: 0.001...(365 * 86400))
    }
}

/// The play outputs that name a file or standard output, checked as `guest` and `call`
/// take them: `--snapshot FILE.png`, `--out FILE.nut|FILE.mkv|-`, and at most one of
/// the outputs on standard output.
enum PlayOutputs {
    static func checkSnapshot(_ path: String?) throws {
        if let path, !path.lowercased().hasSuffix(".png") {
            throw UsageError("--snapshot needs a file ending in .png, not '\(path)'")
        }
    }

    static func checkOut(_ path: String?) throws {
        guard let path, path != "-" else { return }
        let lower = path.lowercased()
        guard lower.hasSuffix(".nut") || lower.hasSuffix(".mkv") else {
            throw UsageError("--out needs a file ending in .nut or .mkv, or '-', not '\(path)'")
        }
    }

    /// The options of `outputs` (name, value) that write to standard output ('-');
    /// more than one is a usage error.
    static func onStandardOutput(_ outputs: [(String, String?)]) throws -> [String] {
        let names = outputs.filter { $0.1 == "-" }.map(\.0)
        guard names.count <= 1 else {
            throw UsageError("\(names.joined(separator: " and ")) cannot both write to standard output ('-')")
        }
        return names
    }
}
