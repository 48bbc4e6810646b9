import Foundation
import LiveAuth
import LiveCodec
import LiveCore
import LiveMix
import LiveRTMP
import Synchronization

/// The co-hosts' voices in the hoster's sound (DESIGN.md §4): the program carries
/// everyone's voice, and each co-host hears everyone but itself.
///
///     co-host feed ─► AAC decode ─► Resampler ─► AudioVoiceBuffer ─┐   (feed's decode thread)
///     host audio ─► [mute] ─► process ─ pops one block per voice ──┴► AudioMixMinus
///                                                   ├► program block (returned: encoded and pushed)
///                                                   └► each co-host's mix-minus ─► HearPublisher
///                                                        (AAC + audio-only push to PUBID.hear, own thread)
///
/// `process` is the hoster pipeline's audio stage, on its audio thread: it never waits
/// on a network (each hear stream is encoded and pushed on a thread of its own, through
/// a small queue that drops the oldest block while its connection is down), and with
/// no co-hosts it returns the host block as it came. The voices are mixed at the host
/// block's rate and channels; each feed resamples to that on its own thread.
public final class CohostVoices: @unchecked Sendable {
    // @unchecked: `mixer` and `lastLevelReport` are used on the audio thread only; the rest is in `state`.
    /// What the audio thread shares with the feeds' threads and the kit.
    private struct State {
        var voices: [CohostVoice] = []
        var format: (sampleRate: Int, channelCount: Int)?
        var levelHandler: (@Sendable (String, String, Int) -> Void)?
        var levelIntervalMicros: UInt64 = 500_000
    }

    private let state = Mutex(State())
    private var mixer = AudioMixMinus()
    private var lastLevelReport: UInt64 = 0

    public init() {}

    /// Reports each co-host's voice level, 0–100 (`AudioLevel`, the loudest block since the
    /// last report), at most once per `intervalMilliseconds` (the anyRTC SDK's showTime), with
    /// its key (peerId) and user id; on the audio thread.
    public func onLevel(every intervalMilliseconds: Int, _ handler: (@Sendable (String, String, Int) -> Void)?) {
        state.withLock { state in
            state.levelIntervalMicros = UInt64(max(1, intervalMilliseconds)) * 1000
            state.levelHandler = handler
        }
    }

    /// Adds the voice `key`; its mix-minus goes to `hear` (none: the voice is only mixed).
    func add(key: String, userId: String, hear: HearPublisher?) {
        let voice = CohostVoice(key: key, userId: userId, hear: hear)
        state.withLock { state in
            state.voices.removeAll { $0.key == key }
            state.voices.append(voice)
        }
        hear?.start()
    }

    /// Removes the voice `key` and closes its hear stream (without waiting).
    func remove(key: String) {
        let gone = state.withLock { state in
            defer { state.voices.removeAll { $0.key == key } }
            return state.voices.filter { $0.key == key }
        }
        gone.forEach { $0.hear?.stop() }
    }

    /// Keys of the voices, in the order they joined.
    public var keys: [String] {
        state.withLock { $0.voices.map(\.key) }
    }

    /// Decoded audio of the voice `key` (its feed's decode thread): resampled to the
    /// mix's format and buffered. Dropped before the mix has run once (its format unknown).
    func push(_ frame: AudioFrame, key: String) {
        let (voice, format) = state.withLock { state in (state.voices.first { $0.key == key }, state.format) }
        guard let voice, let format else { return }
        voice.push(frame, sampleRate: format.sampleRate, channelCount: format.channelCount)
    }

    /// The audio stage (audio thread): the host block in, the program block out.
    public func process(_ host: AudioFrame) -> AudioFrame {
        let voices = state.withLock { state in
            if state.format?.sampleRate != host.sampleRate || state.format?.channelCount != host.channelCount {
                state.format = (host.sampleRate, host.channelCount)
            }
            return state.voices
        }
        guard !voices.isEmpty else { return host }
        let blocks = voices.map { $0.pop(like: host) }
        guard let output = try? mixer.mix([host] + blocks) else { return host }
        for (index, voice) in voices.enumerated() { voice.hear?.send(output.minus[index + 1]) }
        reportLevels(voices, blocks)
        return output.program
    }

    /// Stops every hear stream (the push ended).
    func stop() {
        let all = state.withLock { state in
            defer { state.voices = [] }
            return state.voices
        }
        all.forEach { $0.hear?.stop() }
    }

    private func reportLevels(_ voices: [CohostVoice], _ blocks: [AudioFrame]) {
        let (handler, interval) = state.withLock { ($0.levelHandler, $0.levelIntervalMicros) }
        guard let handler else { return }
        for (voice, block) in zip(voices, blocks) { voice.loudest = max(voice.loudest, AudioLevel.of(block.samples)) }
        let now = Clock.monotonicMicros()
        guard now - lastLevelReport >= interval else { return }
        lastLevelReport = now
        for voice in voices {
            handler(voice.key, voice.userId, voice.loudest)
            voice.loudest = 0
        }
    }
}

/// One co-host's voice: resampled on its feed's thread, buffered for the audio thread.
final class CohostVoice: @unchecked Sendable {
    // @unchecked: `resampler` is used on the feed's decode thread only, `loudest` on the audio thread only.
    let key: String
    let userId: String
    let hear: HearPublisher?
    /// Filled on the feed's thread, emptied on the audio thread.
    private let buffer = Mutex<AudioVoiceBuffer?>(nil)
    private var resampler: Resampler?
    var loudest = 0

    init(key: String, userId: String, hear: HearPublisher?) {
        self.key = key
        self.userId = userId
        self.hear = hear
    }

    /// Feed thread: `frame` at the mix's rate and channels into the buffer.
    func push(_ frame: AudioFrame, sampleRate: Int, channelCount: Int) {
        if resampler?.sampleRate != sampleRate || resampler?.channelCount != channelCount {
            resampler = try? Resampler(sampleRate: sampleRate, channelCount: channelCount)
        }
        guard let converted = frame.sampleRate == sampleRate && frame.channelCount == channelCount
            ? frame : (try? resampler?.convert(frame)) ?? nil
        else { return }
        buffer.withLock { buffer in
            if buffer?.sampleRate != sampleRate || buffer?.channelCount != channelCount {
                buffer = try? AudioVoiceBuffer(sampleRate: sampleRate, channelCount: channelCount)
            }
            try? buffer?.push(converted)
        }
    }

    /// Audio thread: one block as long as `host` (silence while the voice fills).
    func pop(like host: AudioFrame) -> AudioFrame {
        buffer.withLock { stored in
            guard var buffer = stored, buffer.sampleRate == host.sampleRate, buffer.channelCount == host.channelCount else {
                return AudioFrame(sampleRate: host.sampleRate, channelCount: host.channelCount, sampleCount: host.sampleCount, pts: host.pts)
            }
            let block = buffer.pop(host.sampleCount, pts: host.pts)
            stored = buffer
            return block
        }
    }
}

/// A co-host's hear stream: its mix-minus, AAC-encoded and pushed audio-only to
/// `PUBID.hear` on a thread of its own. The connect (and every retry, with the push's
/// backoff) happens there, never on the audio thread; blocks queued meanwhile are
/// dropped oldest first, so the co-host hears the present once it connects.
final class HearPublisher: Sendable {
    let url: RTMPURL
    private let options: RTMPPublishSink.Options
    private let bitrateKbps: Int
    /// About a second of 10 ms blocks.
    private let queue = BoundedQueue<AudioFrame>(capacity: 100, policy: .dropOldest)

    init(url: RTMPURL, options: RTMPPublishSink.Options, bitrateKbps: Int = 64) {
        self.url = url
        self.options = options
        self.bitrateKbps = bitrateKbps
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "liveline.hear"
        thread.start()
    }

    /// Audio thread: one mix-minus block.
    func send(_ block: AudioFrame) { _ = queue.push(block) }

    /// Ends the stream; returns at once (the push closes on its own thread).
    func stop() { queue.close() }

    private func run() {
        var attempt = 0
        while let first = queue.pop() {
            do {
                let encoder = try AACEncoder(sampleRate: first.sampleRate, channelCount: first.channelCount, bitrateKbps: bitrateKbps)
                let sink = RTMPPublishSink(url: url, options: options)
                try sink.open(video: nil, audio: encoder.streamInfo)
                attempt = 0
                defer { try? sink.close() }
                // The block that waited for the connect is stale: start with the newest.
                while let block = queue.pop() {
                    guard block.sampleRate == encoder.sampleRate, block.channelCount == encoder.channelCount else { break }
                    for packet in try encoder.encode(block) { try sink.write(packet) }
                }
            } catch {
                Log.warning("hear stream \(url): \(error)")
                guard let delay = options.backoff.delay(attempt: attempt, unit: Double.random(in: 0...1)) else { return }
                attempt += 1
                var slept = 0.0
                while slept < delay, !queue.isClosed {
                    usleep(100_000)
                    slept += 0.1
                }
            }
        }
    }
}
