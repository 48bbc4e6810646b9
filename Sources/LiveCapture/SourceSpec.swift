import Foundation
import LiveCore

/// A video source as the command line names it:
///
/// - `test`: the moving test pattern;
/// - `color:NAME` or `color:#RRGGBB`: a solid colour;
/// - `file:PATH`: a media file, looped;
/// - `v4l2:/dev/videoN` or just `/dev/videoN`: a V4L2 camera;
/// - `screen:DISPLAY[+X,Y][@WxH]`: the screen of an X display, or part of it (`ScreenSpec`).
public enum SourceSpec: Equatable, Sendable, CustomStringConvertible {
    case testPattern
    case color(YUVColor)
    case file(path: String)
    case camera(device: String)
    case screen(ScreenSpec)

    /// Parses the command-line syntax; throws `.invalidParams` naming what was wrong.
    public init(parsing text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed == "test" || trimmed == "testsrc" {
            self = .testPattern
            return
        }
        if trimmed.hasPrefix("/dev/") {
            self = .camera(device: trimmed)
            return
        }
        guard let colon = trimmed.firstIndex(of: ":") else {
            throw SourceSpec.invalid(text, "expected test, color:NAME, file:PATH, v4l2:/dev/videoN or screen:DISPLAY")
        }
        let kind = trimmed[..<colon].lowercased()
        let argument = String(trimmed[trimmed.index(after: colon)...])
        switch kind {
        case "color", "colour":
            guard let color = YUVColor(parsing: argument) else {
                throw SourceSpec.invalid(text, "unknown colour '\(argument)' (a name such as red, or #RRGGBB)")
            }
            self = .color(color)
        case "file":
            guard !argument.isEmpty else { throw SourceSpec.invalid(text, "file: needs a path") }
            self = .file(path: argument)
        case "v4l2", "camera":
            guard argument.hasPrefix("/dev/"), argument.count > 5 else {
                throw SourceSpec.invalid(text, "v4l2: needs a device path such as /dev/video0")
            }
            self = .camera(device: argument)
        case "screen":
            do {
                self = .screen(try ScreenSpec(parsing: argument))
            } catch {
                throw SourceSpec.invalid(text, error.description)
            }
        default:
            throw SourceSpec.invalid(text, "unknown source kind '\(kind)'")
        }
    }

    private static func invalid(_ text: String, _ why: String) -> LiveError {
        LiveError(.invalidParams, "invalid source '\(text)': \(why)")
    }

    public var description: String {
        switch self {
        case .testPattern: "test"
        case .color(let color): "color:\(color)"
        case .file(let path): "file:\(path)"
        case .camera(let device): "v4l2:\(device)"
        case .screen(let screen): "screen:\(screen)"
        }
    }

    /// Opens the source this spec names. `realTime` paces synthetic and file sources
    /// on the clock (false: as fast as possible, for benchmarks); a camera is always
    /// paced by the device, a screen always on the clock. Files loop at their end.
    public func makeSource(width: Int, height: Int, fps: Int, realTime: Bool = true) throws -> VideoSource {
        switch self {
        case .testPattern:
            return try TestPatternSource(width: width, height: height, fps: fps, realTime: realTime)
        case .color(let color):
            return try ColorSource(color: color, width: width, height: height, fps: fps, realTime: realTime)
        case .file(let path):
            return try FileSource(path: path, width: width, height: height, fps: fps, realTime: realTime, loop: true)
        case .camera(let device):
            return try V4L2Camera(path: device, width: width, height: height, fps: fps)
        case .screen(let screen):
            return try ScreenSource(spec: screen, width: width, height: height, fps: fps)
        }
    }

    /// Checks the size and rate every source accepts.
    static func checkFormat(width: Int, height: Int, fps: Int) throws {
        guard width > 0, height > 0, width % 2 == 0, height % 2 == 0 else {
            throw LiveError(.invalidParams, "source size \(width)x\(height) must be positive and even")
        }
        guard fps > 0, fps <= 240 else {
            throw LiveError(.invalidParams, "source frame rate \(fps) must be between 1 and 240")
        }
    }
}
