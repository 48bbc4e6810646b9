import Foundation
import LiveCodec
import LiveCore

/// An audio source as the command line names it (`--audio-source`):
///
/// - `tone` or `tone:HZ`: the test tone with its once-a-second marker beep;
/// - `silence`: digital silence, timed like a tone;
/// - `none`: no audio track at all (video only);
/// - `file:PATH`: a media file's audio track, looped and paced like its video;
/// - `alsa:DEVICE` or `pulse:NAME`: a sound device through FFmpeg's libavdevice.
public enum AudioSourceSpec: Equatable, Sendable, CustomStringConvertible {
    case tone(frequency: Double)
    case silence
    case none
    case file(path: String)
    case alsa(device: String)
    case pulse(name: String)

    /// Parses the command-line syntax; throws `.invalidParams` naming what was wrong.
    public init(parsing text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch trimmed {
        case "tone": self = .tone(frequency: ToneGenerator.defaultFrequency); return
        case "silence": self = .silence; return
        case "none": self = .none; return
        default: break
        }
        guard let colon = trimmed.firstIndex(of: ":") else {
            throw Self.invalid(text, "expected tone, tone:HZ, silence, none, file:PATH, alsa:DEVICE or pulse:NAME")
        }
        let kind = trimmed[..<colon].lowercased()
        let argument = String(trimmed[trimmed.index(after: colon)...])
        switch kind {
        case "tone":
            guard let hertz = Double(argument), hertz >= 20, hertz <= 20000 else {
                throw Self.invalid(text, "tone: needs a frequency in Hz between 20 and 20000")
            }
            self = .tone(frequency: hertz)
        case "file":
            guard !argument.isEmpty else { throw Self.invalid(text, "file: needs a path") }
            self = .file(path: argument)
        case "alsa":
            guard !argument.isEmpty else { throw Self.invalid(text, "alsa: needs a device such as default or hw:0") }
            self = .alsa(device: argument)
        case "pulse":
            guard !argument.isEmpty else { throw Self.invalid(text, "pulse: needs a source name such as default") }
            self = .pulse(name: argument)
        default:
            throw Self.invalid(text, "unknown audio source kind '\(kind)'")
        }
    }

    private static func invalid(_ text: String, _ why: String) -> LiveError {
        LiveError(.invalidParams, "invalid audio source '\(text)': \(why)")
    }

    public var description: String {
        switch self {
        case .tone(let hertz): hertz == ToneGenerator.defaultFrequency ? "tone" : "tone:\(String(format: "%g", hertz))"
        case .silence: "silence"
        case .none: "none"
        case .file(let path): "file:\(path)"
        case .alsa(let device): "alsa:\(device)"
        case .pulse(let name): "pulse:\(name)"
        }
    }

    /// The audio a video source brings by default: `tone` with the test pattern, the
    /// file's own track with `file:` (none when the file has no sound: it opens the file
    /// to look), none with a colour, a camera or a screen.
    public static func defaultFor(video: SourceSpec) -> AudioSourceSpec {
        switch video {
        case .testPattern: .tone(frequency: ToneGenerator.defaultFrequency)
        case .file(let path): MediaAudioReader.hasAudioTrack(path: path) ? .file(path: path) : .none
        case .color, .camera, .screen: .none
        }
    }

    /// Opens the source this spec names, delivering `sampleRate` Hz and `channelCount`
    /// channels; nil for `none`. `realTime` false: as fast as asked (benchmarks; a device
    /// is always paced by itself). A file is opened here (a file without sound is refused
    /// now); a device is opened by the source's `start()`.
    public func makeSource(sampleRate: Int = 48000, channelCount: Int = 2, realTime: Bool = true) throws -> AudioSource? {
        switch self {
        case .none:
            return nil
        case .tone(let hertz):
            return ToneSource(generator: ToneGenerator(frequency: hertz, sampleRate: sampleRate, channelCount: channelCount),
                              realTime: realTime)
        case .silence:
            return ToneSource(generator: ToneGenerator(sampleRate: sampleRate, channelCount: channelCount, amplitude: 0,
                                                       markers: false), realTime: realTime)
        case .file(let path):
            return try MediaAudioSource(input: .file(path: path, loop: true), sampleRate: sampleRate,
                                        channelCount: channelCount, realTime: realTime)
        case .alsa(let device):
            return try MediaAudioSource(input: .device(.alsa(device)), sampleRate: sampleRate, channelCount: channelCount)
        case .pulse(let name):
            return try MediaAudioSource(input: .device(.pulse(name)), sampleRate: sampleRate, channelCount: channelCount)
        }
    }
}
