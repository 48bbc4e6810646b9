import LiveCore
import LiveNet
import LiveRTMP
import Synchronization

extension GuestPipeline {
    /// What latency control skips of `backlog` (everything received so far, oldest
    /// first): the video `plan`, and how many of its audio frames to drop from the front
    /// (`GuestLatencyControl`); the skipped packets are counted. Decode thread.
    func latencyPlan(_ backlog: [Input], control: GuestLatencyControl) -> (plan: GuestLatencyControl.Plan, audioDrop: Int) {
        let packets = backlog.compactMap { input -> GuestLatencyControl.Packet? in
            guard case .video(let packet) = input else { return nil }
            return GuestLatencyControl.Packet(dtsMilliseconds: packet.dts.milliseconds, isKeyframe: packet.isKeyframe)
        }
        let plan = control.plan(packets)
        let audio = backlog.compactMap { input -> Int64? in
            guard case .audio(let packet) = input else { return nil }
            return packet.pts.milliseconds
        }
        // Audio skips to the first video packet that will be shown.
        let cut = plan == .none ? nil : packets[min(packets.count - 1, plan.drop + plan.decodeSilently)].dtsMilliseconds
        let audioDrop = packets.isEmpty || cut != nil ? control.audioDrop(audio, videoCutMilliseconds: cut) : 0
        if plan != .none || audioDrop > 0 {
            shared.withLock { state in
                state.stats.skippedPackets += plan.drop
                state.stats.silentFrames += plan.decodeSilently
                state.stats.skippedAudioPackets += audioDrop
                state.stats.audioPackets += audioDrop
            }
        }
        return (plan, audioDrop)
    }

    /// After a stall (`buffering(0)`), what arrives is held until its video spans the
    /// buffer target, or until the first held picture has waited that long (a stream of
    /// a few frames a second), with `buffering(percent)` rising as it fills and
    /// `buffering(100)` when it is shown: the picture comes back with the buffer that
    /// absorbs the next jitter instead of stalling again at once. Without latency
    /// control nothing is held. True while holding. Decode thread.
    func refilling() -> Bool {
        guard buffering, let target = configuration.bufferTargetMilliseconds, target > 0,
              backlog.count < configuration.queueCapacity else { return false }
        var dts: [Int64] = []
        for input in backlog {
            switch input {
            // The end is not kept waiting.
            case .end: return false
            case .video(let packet): dts.append(packet.dts.milliseconds)
            default: break
            }
        }
        let percents = GuestLatencyControl(targetMilliseconds: target).refillPercents(dts)
        // No picture yet: the sound and the events go on meanwhile.
        guard let filled = percents.last else { return false }
        for percent in percents where percent > refillPercent && percent < 100 {
            refillPercent = percent
            onEvent?(.buffering(percent: percent))
        }
        let now = Clock.monotonicMicros()
        let since = refillStartMicros ?? now
        refillStartMicros = since
        guard filled < 100, now - since < UInt64(target) * 1000 else {
            endBuffering()
            return false
        }
        return true
    }

    /// The picture moves again: `buffering(100)`, and the refill is over.
    func endBuffering() {
        buffering = false
        refillStartMicros = nil
        refillPercent = 0
        onEvent?(.buffering(percent: 100))
    }
}
