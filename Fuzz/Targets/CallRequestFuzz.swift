// libFuzzer entry point: the 1v1 call's JSON requests (CallRequest.parse) and the call
// logic behind them (CallRegistry.receive) on arbitrary text. The input is split into
// lines; each line is one text message whose first byte picks the sender (its low two
// bits: connection 1…4, so '0'…'3' in the seeds) and how far the clock moves before the
// next (its other bits × 50 ms, so invitations, heartbeats and tokens time out). Checked
// on every step: each message gets exactly one reply, to its sender, unless the sender is
// closed for it (far over the request rate); every callMedia names streams its user may
// publish and play with the query it was given, and nobody else may; an ended call's
// streams can be neither published nor played.
import LiveServer
import LiveSignal

/// Predictable secrets ("s1", "s2", … in the order they are made).
private final class TokenCounter: @unchecked Sendable {
    // @unchecked: libFuzzer calls the target on one thread.
    var next = 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCallRequests(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let counter = TokenCounter()
    var limits = CallLimits()
    limits.pendingTimeout = .seconds(2)
    limits.heartbeatTimeout = .seconds(5)
    limits.maxUsers = 3
    limits.maxRememberedRooms = 4
    var registry = CallRegistry(limits: limits) { _ in
        counter.next += 1
        return "s\(counter.next)"
    }
    var now: UInt64 = 1_000_000
    /// Which user each connection registered, as the replies told.
    var users: [CallConnectionID: String] = [:]
    for line in bytes.split(separator: 0x0A) {
        let selector = line[line.startIndex]
        let sender = CallConnectionID(UInt64(selector & 3) + 1)
        let text = String(decoding: line.dropFirst(), as: UTF8.self)
        let parsed = CallRequest.parse(text)
        if case .failure(let refusal) = parsed, refusal.message.isEmpty {
            fatalError("a refused request without a reason: \(text)")
        }
        var deliveries = registry.receive(text, from: sender, nowMicros: now)
        let replies = deliveries.filter { $0.reaches(sender) && $0.event?.event == .reply }
        let closed = deliveries.contains { delivery in
            if case .disconnect = delivery.action { return delivery.reaches(sender) }
            return false
        }
        if replies.count != 1, !(closed && replies.isEmpty) {
            fatalError("\(replies.count) replies to \(sender)'s \(text): \(deliveries)")
        }
        if case .success(let request) = parsed, request.op == .register, replies.first?.event?.code == 0, let userId = request.userId {
            users[sender] = userId
        }
        now += UInt64(selector >> 2) * 50_000
        deliveries += registry.tick(nowMicros: now)
        check(deliveries, registry: registry, users: users)
        for delivery in deliveries {
            if case .disconnect = delivery.action { delivery.recipients.forEach { users[$0] = nil } }
        }
    }
    for connection in 1...4 { _ = registry.disconnect(CallConnectionID(UInt64(connection))) }
    if registry.callCount != 0 || registry.userCount != 0 {
        fatalError("\(registry.callCount) calls and \(registry.userCount) users left with every connection closed")
    }
    return 0
}

/// The stream rules agree with what the deliveries told the users.
private func check(_ deliveries: [CallDelivery], registry: CallRegistry, users: [CallConnectionID: String]) {
    var ended: Set<String> = []
    for delivery in deliveries {
        if case .endStreams(let roomId) = delivery.action { ended.insert(roomId) }
    }
    for roomId in ended {
        for caller in [true, false] {
            let name = CallStreams.streamName(roomId: roomId, caller: caller)
            for secret in (1...6).map({ "call=s\($0)" }) {
                if registry.publishRefusal(streamName: name, query: secret, userId: nil, checksUsers: false) == nil
                    || registry.playRefusal(streamName: name, query: secret, userId: nil, checksUsers: false) == nil {
                    fatalError("\(name) of an ended call still opens with \(secret)")
                }
            }
        }
    }
    for delivery in deliveries {
        guard let media = delivery.event, media.event == .callMedia, let roomId = media.roomId, !ended.contains(roomId),
              let connection = delivery.recipients.first, let user = users[connection],
              let publish = media.publishStream, let play = media.playStream else { continue }
        guard registry.call(media.callId ?? "")?.isActive == true else { continue }
        if registry.publishRefusal(streamName: publish, query: media.publishQuery, userId: user, checksUsers: true) != nil
            || registry.playRefusal(streamName: play, query: media.playQuery, userId: user, checksUsers: true) != nil {
            fatalError("\(user) may not use the streams its callMedia gave: \(media)")
        }
        if registry.publishRefusal(streamName: play, query: media.publishQuery, userId: user, checksUsers: false) == nil
            || registry.playRefusal(streamName: publish, query: media.playQuery, userId: user, checksUsers: false) == nil {
            fatalError("\(user) may publish its peer's stream or play its own: \(media)")
        }
    }
}
