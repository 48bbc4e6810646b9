import LiveCodec
import LiveCore

/// Sound from a media file's audio track (`file:PATH`) or a capture device
/// (`alsa:DEVICE`, `pulse:NAME`), read by `MediaAudioReader`, converted to the requested
/// rate and channels and cut into 10 ms blocks.
///
/// Timing: block pts count samples from 0 at `start()` (sample n is at n / rate on the
/// capture clock), never the device's or the file's own stamps, so audio shares one clock
/// with the video source (see `AudioSource`).
/// - A file is paced like `FileSource` paces its pictures: both map the file's time onto
///   the clock that starts at `start()` (the first sample, like the first picture, at 0)
///   and sleep on the monotonic clock until it is due; a block is due when its last sample
///   is (as a microphone delivers it). At the end it rewinds when looping; the pass lasts
///   the file's declared duration when the file also has pictures (the duration
///   `FileSource` loops on too, padded with silence if the track is shorter), so sound and
///   pictures start each pass together; an audio-only file loops gaplessly on its samples.
///   `realTime` false: as fast as asked.
/// - A device is opened by `start()` (so no stale sound piles up before it) and paced by
///   the device itself: reading blocks until it has captured a period.
///
/// Confined to the audio capture thread, like every `AudioSource`.
public final class MediaAudioSource: AudioSource, @unchecked Sendable {
    // @unchecked: confined to the audio capture thread, like every `AudioSource`.
    /// Where the sound comes from.
    public enum Input: Equatable, Sendable {
        case file(path: String, loop: Bool)
        case device(MediaAudioReader.Device)
    }

    public let input: Input
    public let sampleRate: Int
    public let channelCount: Int
    /// Whether a file is paced in real time (devices always are, by the device).
    public let realTime: Bool
    /// Samples per channel in each block (10 ms).
    public let blockSize: Int

    private var reader: MediaAudioReader?
    private var pending: AudioBlockBuffer
    private var pacer = FramePacer(fps: 100)
    /// Samples delivered since `start()`.
    private var delivered: Int64 = 0
    /// Samples of the current pass through the file queued so far.
    private var passSamples: Int64 = 0
    private var readAll = false
    private var used = false

    /// Opens a file's audio track now (so a missing track is refused before anything
    /// starts) or prepares a device that `start()` opens. Throws `.invalidParams` for a
    /// file that cannot be read or has no audio track.
    public init(input: Input, sampleRate: Int = 48000, channelCount: Int = 2, realTime: Bool = true) throws {
        guard sampleRate == 48000 || sampleRate == 44100, (1...2).contains(channelCount) else {
            throw LiveError(.invalidParams, "audio must be 48000 or 44100 Hz, mono or stereo (not \(sampleRate) Hz, \(channelCount) channels)")
        }
        self.input = input
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.realTime = realTime
        blockSize = sampleRate / 100
        pending = AudioBlockBuffer(channelCount: channelCount)
        if case .file(let path, _) = input {
            do {
                reader = try MediaAudioReader(path: path, sampleRate: sampleRate, channelCount: channelCount)
            } catch {
                throw LiveError(.invalidParams, "cannot read audio from \(path): \(ffmpegReason(error))")
            }
        }
    }

    public var name: String {
        let output = "\(sampleRate) Hz \(channelCount == 1 ? "mono" : "stereo")"
        switch input {
        case .file(let path, let loop):
            let source = reader.map { "\($0.sourceSampleRate) Hz, \($0.sourceChannelCount) ch" } ?? "?"
            return "file \(path) (\(source)) → \(output)\(loop ? ", looped" : "")"
        case .device(let device):
            return "\(device) → \(output)"
        }
    }

    /// Starts from the file's first sample, or opens the device; throws `.exception`
    /// naming the device and the reason when it cannot be opened.
    public func start() throws {
        switch input {
        case .file:
            if used { try reader?.rewind() }
        case .device(let device):
            reader = nil
            do {
                reader = try MediaAudioReader(device: device, sampleRate: sampleRate, channelCount: channelCount)
            } catch let error as FFmpegError {
                throw LiveError(.exception, error.message)  // it names the device and what to check
            } catch {
                throw LiveError(.exception, "cannot capture from \(device): \(error)")
            }
        }
        used = true
        pending = AudioBlockBuffer(channelCount: channelCount)
        delivered = 0
        passSamples = 0
        readAll = false
        pacer.start()
    }

    public func nextFrame() throws -> AudioFrame? {
        guard let reader else { return nil }
        while pending.count < blockSize && !readAll {
            if let frame = try reader.nextFrame() {
                pending.append(frame)
                passSamples += Int64(frame.sampleCount)
            } else if case .file(_, true) = input, passSamples > 0 {
                pending.appendSilence(Int(passPadding(reader)))
                try reader.rewind()
                passSamples = 0
            } else {
                readAll = true
            }
        }
        let count = min(blockSize, pending.count)
        guard count > 0 else { return nil }
        let block = AudioFrame(sampleRate: sampleRate, channelCount: channelCount, samples: pending.take(count),
                               pts: MediaTime(micros: delivered * 1_000_000 / Int64(sampleRate)))
        delivered += Int64(count)
        if realTime, case .file = input {
            pacer.wait(untilOffset: delivered * 1_000_000 / Int64(sampleRate))
        }
        return block
    }

    /// Closes a device; a file stays open for another `start()`. Safe to call twice.
    public func stop() {
        if case .device = input { reader = nil }
    }

    /// Silence that brings a pass up to the file's declared duration when the file has
    /// pictures too (the period `FileSource` loops on); none for a sound-only file.
    private func passPadding(_ reader: MediaAudioReader) -> Int64 {
        guard reader.hasVideo, let duration = reader.durationMicros else { return 0 }
        let period = duration * Int64(sampleRate) / 1_000_000
        return max(0, period - passSamples)
    }
}
