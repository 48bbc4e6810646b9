import Foundation
import LiveCore

/// Shared shape of a subcommand: parse, run, and turn errors into stderr and an exit code.
protocol Command {
    static var name: String { get }
    static var help: String { get }
    static func run(_ arguments: inout Arguments) throws -> Int32
}

extension Command {
    static func main(_ raw: [String]) -> Int32 {
        var arguments = Arguments(raw, command: name, help: help)
        if arguments.wantsHelp {
            print(help)
            return 0
        }
        do {
            return try run(&arguments)
        } catch let error as UsageError {
            printError("liveline \(name): \(error.message)\nRun 'liveline \(name) --help' for the options.")
            return ExitStatus.usage
        } catch {
            printError("liveline \(name): \(error)")
            return ExitStatus.of(error)
        }
    }
}

/// Turns Ctrl-C and SIGTERM into a call of `handler` on a queue, instead of interrupting
/// whatever runs, until the returned value is released.
final class StopSignals {
    private let sources: [DispatchSourceSignal]

    init(_ handler: @escaping @Sendable () -> Void) {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        sources = [SIGINT, SIGTERM].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }

    deinit { sources.forEach { $0.cancel() } }
}

func printError(_ message: String, terminator: String = "\n") {
    CommandOutput.standardError.write(message + terminator)
}

/// Writes one line to stdout at once (stats lines must not interleave or sit in a
/// buffer); false when stdout's reader has gone (see `CommandOutput`).
@discardableResult
func printLine(_ line: String) -> Bool {
    CommandOutput.standardOutput.write(line + "\n")
}

/// A report's JSON line: on stdout, or on stderr when stdout carries media
/// (`toStandardError`) or, with `orStandardError`, when stdout's reader has gone (so a
/// summary is still seen).
func printJSONLine(_ line: String, toStandardError: Bool, orStandardError: Bool = false) {
    if toStandardError || (!printLine(line) && orStandardError) { printError(line) }
}

/// A compact JSON object from ordered key/value pairs (stable key order for people reading it).
func jsonLine(_ pairs: KeyValuePairs<String, Any?>) -> String {
    var parts: [String] = []
    for (key, value) in pairs {
        parts.append("\"\(key)\":\(jsonValue(value))")
    }
    return "{" + parts.joined(separator: ",") + "}"
}

/// A value already written as JSON (an object nested in a `jsonLine`).
struct RawJSON {
    let text: String

    /// A JSON object of string values, its keys sorted.
    init(object: [String: String]) {
        text = "{" + object.sorted { $0.key < $1.key }.map { "\(jsonValue($0.key)):\(jsonValue($0.value))" }
            .joined(separator: ",") + "}"
    }
}

private func jsonValue(_ value: Any?) -> String {
    switch value {
    case nil: return "null"
    case let v as RawJSON: return v.text
    case let v as Bool: return v ? "true" : "false"
    case let v as Int: return String(v)
    case let v as UInt64: return String(v)
    case let v as Double:
        return v.isFinite ? String(format: "%.2f", v) : "null"
    case let v as String:
        var out = "\""
        for scalar in v.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case let s where s.value < 0x20: out += String(format: "\\u%04x", s.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    default: return jsonValue(String(describing: value!))
    }
}
