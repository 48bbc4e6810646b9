import LiveCore
import LiveRTMP

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
            lock.lock()
            _stats.skippedPackets += plan.drop
            _stats.silentFrames += plan.decodeSilently
            _stats.skippedAudioPackets += audioDrop
            _stats.audioPackets += audioDrop
            lock.unlock()
        }
        return (plan, audioDrop)
    }
}
