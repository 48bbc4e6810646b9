import LiveCore
import LiveSignal

/// A connection to the call signaling (`/call`), numbered by `CallService` as the line
/// numbers its participants.
public typealias CallConnectionID = LineParticipantID

/// What the call registry asks the transport to do, in order. One event goes to all its
/// recipients as one delivery, so the transport encodes it once.
public struct CallDelivery: Equatable, Sendable {
    public enum Action: Equatable, Sendable {
        /// Send the event as a JSON text message.
        case send(CallEvent)
        /// Close the connection (it was declared gone), saying `reason` and the anyRTC
        /// SDK's `code` (the WebSocket close code is `LineCloseCode.base` + code).
        case disconnect(reason: String, code: LiveCode)
        /// The accepted call in `roomId` ended: the relay ends the publishers of both its
        /// streams (`call-ROOM-1`, `call-ROOM-2`). Has no recipients.
        case endStreams(roomId: String)
    }

    public var recipients: [CallConnectionID]
    public var action: Action

    public init(to recipients: [CallConnectionID], _ action: Action) {
        self.recipients = recipients
        self.action = action
    }

    public init(to recipient: CallConnectionID, _ action: Action) {
        self.init(to: [recipient], action)
    }

    static func send(_ event: CallEvent, to recipient: CallConnectionID) -> CallDelivery { CallDelivery(to: recipient, .send(event)) }

    /// True when `connection` is one of the recipients.
    public func reaches(_ connection: CallConnectionID) -> Bool { recipients.contains(connection) }

    /// The event, for a `send`.
    public var event: CallEvent? {
        if case .send(let event) = action { return event }
        return nil
    }
}

/// A bounded memory of strings in the order they were added: beyond `capacity`, the
/// oldest is forgotten first. Pure.
struct RecentSet: Sendable {
    let capacity: Int
    private var members: Set<String> = []
    /// A ring of the members in insertion order; `next` is the oldest once it is full.
    private var order: [String] = []
    private var next = 0

    init(capacity: Int) { self.capacity = max(0, capacity) }

    var count: Int { members.count }

    func contains(_ value: String) -> Bool { members.contains(value) }

    mutating func insert(_ value: String) {
        guard capacity > 0, !members.contains(value) else { return }
        if order.count < capacity {
            order.append(value)
        } else {
            members.remove(order[next])
            order[next] = value
            next = (next + 1) % capacity
        }
        members.insert(value)
    }
}
