import Foundation
import LiveAuth
import LiveCapture
import LiveCodec
import LiveCore
import LiveNet
import LiveRTMP
import Synchronization

extension GuestPipeline {
    // MARK: - Decode thread

    func decodeLoop() {
        shared.withLock { $0.decodeThread = pthread_self() }
        var reason = EndReason.stopped
        var failure: Swift.Error?
        let control = configuration.bufferTargetMilliseconds.map { GuestLatencyControl(targetMilliseconds: $0) }
        loop: while true {
            if let requested = requestedEnd() {
                reason = requested
                break
            }
            if let duration = configuration.duration,
               Double(Clock.monotonicMicros() - startMicros) / 1e6 >= duration {
                reason = .duration
                break
            }
            tickEvents()
            // What a refill after a stall holds (`refilling`) stays in front of what comes.
            if let first = queue.pop(timeout: 0.05) { backlog.append(first) }
            // Everything received so far: latency control looks at all of it at once.
            while backlog.count < configuration.queueCapacity, let next = queue.pop(timeout: 0) { backlog.append(next) }
            guard !backlog.isEmpty, !refilling() else { continue }
            defer { backlog.removeAll(keepingCapacity: true) }
            let (plan, audioDrop) = control.map { latencyPlan(backlog, control: $0) } ?? (.none, 0)
            var videoIndex = 0, audioIndex = 0
            for input in backlog {
                do {
                    switch input {
                    case .metadata(let metadata):
                        self.metadata = metadata
                        if let fps = metadata.framerate { y4m?.setFrameRate(fps) }
                        audioOnlyByMetadata = metadata.audioCodecID != nil && metadata.videoCodecID == nil
                            && metadata.width == nil && metadata.height == nil
                    case .audioConfiguration(let asc, let config):
                        configureAudio(asc: asc, config)
                    case .heard(let frame):
                        // Heard only while the hear stream plays (one still queued after it stopped is not).
                        if isHearing {
                            try hear(frame)
                            for onset in heardBeeps.audio(frame) {
                                onEvent?(.beepHeard(ptsMicros: onset, wallMicros: Int64(Clock.wallMicros())))
                            }
                        }
                    case .audio(let packet):
                        defer { audioIndex += 1 }
                        if audioIndex < audioDrop {
                            currentPlayer?.markConsumed(upTo: packet.pts)
                            continue
                        }
                        try decodeAudio(packet)
                    case .configuration(let avcC, let configuration):
                        try configure(avcC: avcC, configuration)
                    case .video(let packet):
                        defer { videoIndex += 1 }
                        if videoIndex < plan.drop {
                            currentPlayer?.markConsumed(upTo: packet.dts)
                            continue
                        }
                        let show = videoIndex >= plan.drop + plan.decodeSilently
                        if let end = try decode(packet, show: show) {
                            reason = end
                            break loop
                        }
                    case .playing:
                        recorder?.playStarted()
                        onEvent?(.ok)
                    case .reconnecting(let times):
                        onEvent?(.reconnecting(times: times))
                    case .end(let end, let error):
                        reason = end
                        failure = error
                        break loop
                    }
                } catch let error as ReaderClosing where error.readerClosed {
                    // The reader of a standard-output output went away (| head): a stop, not a failure.
                    reason = .stopped
                    break loop
                } catch {
                    reason = .failed
                    failure = error
                    break loop
                }
            }
        }
        finish(reason: reason, error: failure)
    }

    /// Status once a second from the first frame or the first audio (an audio-only
    /// stream is live too); buffering(0) when frames stop.
    func tickEvents() {
        guard firstFrameShown || firstAudioShown, let onEvent else { return }
        let now = Clock.monotonicMicros()
        if firstFrameShown, !buffering, now - lastShownMicros > UInt64(configuration.stallMilliseconds) * 1000 {
            buffering = true
            onEvent(.buffering(percent: 0))
        }
        guard now >= nextStatusMicros else { return }
        let player = playerStats
        let stats = self.stats
        var status = GuestStatus()
        status.cacheMilliseconds = player.bufferedMilliseconds
        status.bytesPerSecond = Int(player.receiveRate)
        status.fps = Double(stats.frames - framesAtLastStatus) / max(0.001, Double(now - (nextStatusMicros - 1_000_000)) / 1e6)
        status.droppedFrames = stats.droppedPackets + stats.skippedPackets + stats.silentFrames
        status.reconnects = stats.reconnects
        framesAtLastStatus = stats.frames
        nextStatusMicros = now + 1_000_000
        onEvent(.status(status))
    }

    func configure(avcC: [UInt8], _ configuration: H264Bitstream.AVCDecoderConfiguration) throws {
        recorder?.setConfiguration(configuration)
        out?.setConfiguration(configuration)
        guard configuration != decoderConfiguration || decoder == nil else { return }
        if let decoder {
            for frame in (try? decoder.flush()) ?? [] { try present(frame) }
        }
        decoder = try H264Decoder(extradata: avcC)
        decoderConfiguration = configuration
    }

    /// Decodes one packet and hands its frames on; returns an end reason when the frame
    /// limit is reached.
    func decode(_ packet: RTMPVideoPacket, show: Bool = true) throws -> EndReason? {
        currentPlayer?.markConsumed(upTo: packet.dts)
        shared.withLock { state in
            state.stats.packets += 1
            if packet.isKeyframe { state.stats.keyframes += 1 }
        }
        guard let decoder, let decoderConfiguration else { return nil }
        let frames: [VideoFrame]
        do {
            frames = try decoder.decode(avcc: packet.avcc, lengthSize: decoderConfiguration.lengthSize, pts: packet.pts)
        } catch {
            shared.withLock { $0.stats.decodeErrors += 1 }
            return nil
        }
        if show {
            for frame in frames { try present(frame) }
        }
        if recorder != nil || out != nil {
            let fps = Self.wholeNumber(metadata?.framerate, in: 1...1000) ?? 30
            let width = lastFrame?.width ?? Self.wholeNumber(metadata?.width, in: 1...16384) ?? 0
            let height = lastFrame?.height ?? Self.wholeNumber(metadata?.height, in: 1...16384) ?? 0
            if let recorder {
                do {
                    try recorder.write(packet, width: width, height: height, fps: fps)
                    shared.withLock { $0.stats.recordedPackets = recorder.packetsWritten }
                } catch {
                    stopRecording(recorder, after: error)
                }
            }
            try writeOut { try $0.write(packet, width: width, height: height, fps: fps) }
        }
        if let limit = configuration.frameLimit {
            if shared.withLock({ $0.stats.frames }) >= limit { return .frameLimit }
        }
        return nil
    }

    /// The stream's AAC header: a decoder for it (a new one when it changed). A header
    /// FFmpeg cannot open is counted and reported; audio is skipped until another one.
    func configureAudio(asc: [UInt8], _ config: AACAudioSpecificConfig) {
        recorder?.setAudioConfiguration(asc: asc, config)
        out?.setAudioConfiguration(asc: asc, config)
        // The same header again (a reconnect): the decoder goes on, or stays refused.
        guard asc != audioConfiguration else { return }
        audioConfiguration = asc
        do {
            audioDecoder = try AACDecoder(audioSpecificConfig: asc)
        } catch {
            audioDecoder = nil
            Log.warning("\(configuration.url): the AAC decoder refused the stream's audio header: \(error)")
            shared.withLock { $0.stats.audioDecodeErrors += 1 }
        }
    }

    /// The stream has no video: its metadata says so, or a second of audio came before
    /// any AVC header.
    func isAudioOnly(at pts: MediaTime) -> Bool {
        guard decoderConfiguration == nil else { return false }
        if audioOnlyByMetadata { return true }
        if firstAudioMicros == nil { firstAudioMicros = pts.micros }
        return pts.micros - firstAudioMicros! >= 1_000_000
    }

    /// Decodes one AAC frame and hands the audio on: stats, level, sync, writers, the
    /// hook; the packet itself goes to the recording and `--out`.
    func decodeAudio(_ packet: RTMPAudioPacket) throws {
        currentPlayer?.markConsumed(upTo: packet.pts)
        let audioOnly = isAudioOnly(at: packet.pts)
        shared.withLock { state in
            state.stats.audioPackets += 1
            state.stats.audioOnly = audioOnly
        }
        if let recorder {
            do {
                try recorder.write(audio: packet, audioOnly: audioOnly)
                shared.withLock { $0.stats.recordedPackets = recorder.packetsWritten + recorder.audioPacketsWritten }
            } catch {
                stopRecording(recorder, after: error)
            }
        }
        try writeOut { try $0.write(audio: packet, audioOnly: audioOnly) }
        guard let audioDecoder else { return }
        let frames: [AudioFrame]
        do {
            frames = try audioDecoder.decode(packet.data, pts: packet.pts)
        } catch {
            shared.withLock { $0.stats.audioDecodeErrors += 1 }
            return
        }
        for frame in frames { try present(frame) }
    }

    /// Program audio: A/V sync, and what the guest hears unless the hear stream plays.
    func present(_ frame: AudioFrame) throws {
        let hearing = shared.withLock { state in
            state.sync.audio(frame)
            return state.hearPipeline != nil
        }
        if !hearing { try hear(frame) }
    }

    /// What the guest hears: stats, level, writers, the hook.
    func hear(_ frame: AudioFrame) throws {
        levels.add(frame)
        try wav?.write(frame)
        try pcm?.write(frame)
        shared.withLock { state in
            state.stats.audioFrames += 1
            state.stats.audioSampleRate = frame.sampleRate
            state.stats.audioChannels = frame.channelCount
            state.stats.audioLevel = levels.level
            state.stats.wavBytes = wav?.bytesWritten ?? 0
            state.stats.pcmBytes = pcm?.bytesWritten ?? 0
        }
        if !firstAudioShown {
            firstAudioShown = true
            // The status count starts here unless the first frame came first.
            if !firstFrameShown { nextStatusMicros = Clock.monotonicMicros() + 1_000_000 }
            onEvent?(.firstAudio(sampleRate: frame.sampleRate, channels: frame.channelCount))
        }
        if let interval = configuration.audioLevelIntervalMilliseconds {
            let now = Clock.monotonicMicros()
            if now - lastLevelEventMicros >= UInt64(interval) * 1000, let level = levels.takeSinceLast() {
                lastLevelEventMicros = now
                onEvent?(.hosterAudioActive(level: level, showTime: interval))
            }
        }
        onAudio?(frame)
    }

    func present(_ frame: VideoFrame) throws {
        let now = Clock.wallMicros()
        let monotonic = Clock.monotonicMicros()
        let first = !firstFrameShown
        shared.withLock { state in
            state.stats.frames += 1
            state.stats.width = frame.width
            state.stats.height = frame.height
            if state.stats.firstFrameMs == nil { state.stats.firstFrameMs = Double(monotonic - startMicros) / 1000 }
            if frame.captureTimeMicros != 0 {
                state.latency.add(micros: Int64(bitPattern: now &- frame.captureTimeMicros))
            }
        }
        if let y4m {
            try y4m.write(frame)
            shared.withLock { $0.stats.y4mFrames = y4m.framesWritten }
        }
        // The test pattern's marker patch, for A/V sync (a few hundred pixels read).
        let lit = TestPatternSource.markerLit(in: frame)
        shared.withLock { $0.sync.frame(pts: frame.pts.micros, lit: lit) }
        let resized = lastFrame.map { $0.width != frame.width || $0.height != frame.height } ?? false
        // Holding the frame keeps one pool buffer from reuse, which costs no copy.
        lastFrame = frame
        lastShownMicros = monotonic
        if first {
            firstFrameShown = true
            nextStatusMicros = monotonic + 1_000_000
            framesAtLastStatus = 0
            onEvent?(.firstFrame(width: frame.width, height: frame.height))
        } else if buffering {
            // Shown without a refill (no latency control, or an end in the queue).
            endBuffering()
        }
        if resized { onEvent?(.sizeChanged(width: frame.width, height: frame.height)) }
        onFrame?(frame)
    }
}
