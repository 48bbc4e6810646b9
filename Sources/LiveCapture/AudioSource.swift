import LiveCore

/// Where a hoster's sound comes from: a generated tone, silence, a media file's audio
/// track or a sound device (the audio half of the anyRTC SDK's local capturer).
///
/// A source is confined to the audio capture thread: `start`, `nextFrame` and `stop` are
/// called from that one thread. Every block has `sampleRate` and `channelCount` as
/// declared, and `pts` on the capture clock: 0 at `start()`, the same clock as the video
/// source's frame pts, so that audio and video line up by timestamp alone.
///
/// Sendable because it is handed to that thread; conformers mark it unchecked, their
/// state being touched only there.
public protocol AudioSource: AnyObject, Sendable {
    /// Samples per second of each channel (48000 or 44100).
    var sampleRate: Int { get }
    /// 1 or 2.
    var channelCount: Int { get }
    /// A human description, such as `tone 440 Hz` or `alsa hw:0`.
    var name: String { get }

    /// Prepares the source (opens the device or file, starts the clock that paces it).
    func start() throws
    /// The next block of samples (about 10 ms; any size). Blocks until it is due when
    /// the source is paced in real time; nil at the end of the stream.
    func nextFrame() throws -> AudioFrame?
    /// Releases what `start` acquired. Safe to call twice.
    func stop()
}

/// The test source's sound (`tone`, `tone:HZ`): `ToneGenerator`'s steady tone with a
/// marker beep at every whole second of the capture clock, the instant
/// `TestPatternSource` lights its marker patch. `silence` is the same source at zero
/// amplitude. Paced in real time from `start()` unless `realTime` is false.
public final class ToneSource: AudioSource, @unchecked Sendable {
    // @unchecked: confined to the audio capture thread, like every `AudioSource`.
    public let generator: ToneGenerator
    public let realTime: Bool
    /// Samples per channel in each block (10 ms).
    public let blockSize: Int
    private var next: Int64 = 0
    private var pacer = FramePacer(fps: 100)

    public init(generator: ToneGenerator, realTime: Bool = true) {
        self.generator = generator
        self.realTime = realTime
        blockSize = generator.sampleRate / 100
    }

    public var sampleRate: Int { generator.sampleRate }
    public var channelCount: Int { generator.channelCount }
    public var name: String {
        generator.amplitude == 0 ? "silence" : "tone \(String(format: "%g", generator.frequency)) Hz"
    }

    public func start() throws {
        next = 0
        pacer.start()
    }

    public func nextFrame() throws -> AudioFrame? {
        let frame = generator.frame(start: next, count: blockSize)
        next += Int64(blockSize)
        // A block is due once its last sample has been "captured".
        if realTime { pacer.wait(untilOffset: next * 1_000_000 / Int64(sampleRate)) }
        return frame
    }

    public func stop() {}
}
