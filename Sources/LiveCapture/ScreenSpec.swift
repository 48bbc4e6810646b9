import Foundation
import LiveCore

/// Which part of which X display a `screen:` source captures, in the words of ffmpeg's
/// x11grab (`-video_size WxH -i DISPLAY+X,Y`), written as one source spec:
///
///     screen:DISPLAY[+X,Y][@WxH]
///
/// - `DISPLAY` is an X display name, `[HOST]:N[.SCREEN]` (`:99`, `:0.0`,
///   `localhost:10`); empty takes the `DISPLAY` environment variable when the source opens;
/// - `+X,Y` is the top-left corner of the captured area (default `+0,0`);
/// - `@WxH` its size (default: the whole screen from X,Y on, as x11grab does).
///
/// So `screen::99` is all of display :99 and `screen::99+0,0@640x360` its top-left
/// 640x360. The captured area is fitted into the pipeline's picture (aspect-fit, black
/// bars) whatever its size.
public struct ScreenSpec: Equatable, Sendable, CustomStringConvertible {
    /// The X display name; empty for the `DISPLAY` environment variable.
    public var display: String
    /// The captured area's top-left corner on the screen.
    public var x: Int
    public var y: Int
    /// The captured area's size; nil for the rest of the screen from (x, y).
    public var size: (width: Int, height: Int)?

    /// The largest offset or size accepted (X11 coordinates are 16-bit).
    public static let maxCoordinate = 32767

    public init(display: String, x: Int = 0, y: Int = 0, size: (width: Int, height: Int)? = nil) {
        self.display = display
        self.x = x
        self.y = y
        self.size = size
    }

    /// Parses what follows `screen:`; throws a message saying what is wrong (the caller
    /// names the whole spec).
    public init(parsing text: String) throws(ScreenSpec.SyntaxError) {
        var rest = Substring(text)
        var size: (Int, Int)?
        if let at = rest.lastIndex(of: "@") {
            let sizeText = rest[rest.index(after: at)...]
            let parts = sizeText.split(separator: "x", omittingEmptySubsequences: false)
            guard parts.count == 2, let w = Self.number(parts[0]), let h = Self.number(parts[1]), w >= 2, h >= 2 else {
                throw SyntaxError("the size after @ must be WIDTHxHEIGHT, such as @640x360 (not '@\(sizeText)')")
            }
            size = (w, h)
            rest = rest[..<at]
        }
        var x = 0, y = 0
        if let plus = rest.lastIndex(of: "+") {
            let offsetText = rest[rest.index(after: plus)...]
            let parts = offsetText.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2, let ox = Self.number(parts[0]), let oy = Self.number(parts[1]) else {
                throw SyntaxError("the offset after + must be X,Y, such as +0,0 (not '+\(offsetText)')")
            }
            (x, y) = (ox, oy)
            rest = rest[..<plus]
        }
        let display = String(rest)
        guard display.isEmpty || Self.isDisplayName(display) else {
            throw SyntaxError("'\(display)' is not an X display name such as :99, :0.0 or host:10")
        }
        self.init(display: display, x: x, y: y, size: size)
    }

    /// Why a `screen:` spec could not be read.
    public struct SyntaxError: Error, CustomStringConvertible, Equatable, Sendable {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    public static func == (a: ScreenSpec, b: ScreenSpec) -> Bool {
        a.display == b.display && a.x == b.x && a.y == b.y && a.size?.width == b.size?.width && a.size?.height == b.size?.height
    }

    /// The spec as it is written after `screen:` (`:99+0,0@640x360`).
    public var description: String {
        display + (x != 0 || y != 0 ? "+\(x),\(y)" : "") + (size.map { "@\($0.width)x\($0.height)" } ?? "")
    }

    /// The display to open: `display`, or the `DISPLAY` environment variable when empty
    /// (nil when that is unset too).
    public var resolvedDisplay: String? {
        if !display.isEmpty { return display }
        let fromEnvironment = ProcessInfo.processInfo.environment["DISPLAY"] ?? ""
        return fromEnvironment.isEmpty ? nil : fromEnvironment
    }

    /// A decimal number 0…`maxCoordinate`, digits only.
    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber),
              let value = Int(text), value <= maxCoordinate else { return nil }
        return value
    }

    /// `[HOST]:N[.S]`: an optional host (letters, digits, `.`, `-`, `_`, `/`), a display
    /// number and an optional screen number.
    private static func isDisplayName(_ name: String) -> Bool {
        guard name.count <= 255, let colon = name.lastIndex(of: ":") else { return false }
        let host = name[..<colon]
        guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_" || $0 == "/") })
        else { return false }
        let parts = name[name.index(after: colon)...].split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return false }
        return parts.allSatisfy { !$0.isEmpty && $0.count <= 5 && $0.allSatisfy { $0.isASCII && $0.isNumber } }
    }
}
