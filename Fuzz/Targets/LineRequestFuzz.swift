// libFuzzer entry point: the line's JSON requests (LineRequest.parse) and the room logic
// behind them (LineRegistry.receive) on arbitrary text. The input is split into lines;
// each line is one text message whose first byte picks the sender (its low two bits:
// participant 1…4, so '0'…'3' in the seeds) and how far the clock moves before the next
// (its other bits × 50 ms, so applications and heartbeats time out). Every message must
// get exactly one reply, to its sender, unless the sender is disconnected for it (far over
// the request rate).
import LiveServer
import LiveSignal

/// Predictable tokens (peerIds "t1", "t2", … in the order they are made), so seeds can
/// name the peerId an application was given.
private final class TokenCounter: @unchecked Sendable {
    // @unchecked: libFuzzer calls the target on one thread.
    var next = 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLineRequests(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let counter = TokenCounter()
    let limits = LineLimits(maxCohosts: 2, applyTimeout: .seconds(2), heartbeatTimeout: .seconds(5))
    var registry = LineRegistry(limits: limits) { _ in
        counter.next += 1
        return "t\(counter.next)"
    }
    var now: UInt64 = 1_000_000
    for line in bytes.split(separator: 0x0A) {
        let selector = line[line.startIndex]
        let sender = LineParticipantID(UInt64(selector & 3) + 1)
        let text = String(decoding: line.dropFirst(), as: UTF8.self)
        if case .failure(let refusal) = LineRequest.parse(text), refusal.message.isEmpty {
            fatalError("a refused request without a reason: \(text)")
        }
        let deliveries = registry.receive(text, from: sender, nowMicros: now)
        let replies = deliveries.filter { $0.reaches(sender) && $0.event?.event == .reply }
        let closed = deliveries.contains { delivery in
            if case .disconnect = delivery.action { return delivery.reaches(sender) }
            return false
        }
        if replies.count != 1, !(closed && replies.isEmpty) {
            fatalError("\(replies.count) replies to \(sender)'s \(text): \(deliveries)")
        }
        now += UInt64(selector >> 2) * 50_000
        _ = registry.tick(nowMicros: now)
    }
    for participant in 1...4 { _ = registry.disconnect(LineParticipantID(UInt64(participant))) }
    return 0
}
