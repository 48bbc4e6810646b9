/// A participant of the line: one WebSocket connection, numbered by `LineService`.
public struct LineParticipantID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let value: UInt64

    public init(_ value: UInt64) { self.value = value }

    public static func < (a: LineParticipantID, b: LineParticipantID) -> Bool { a.value < b.value }
    public var description: String { "#\(value)" }
}

/// What the line's state machine asks the transport to do for one participant, in order.
public struct LineDelivery: Equatable, Sendable {
    public enum Action: Equatable, Sendable {
        /// Send the event as a JSON text message.
        case send(LineEvent)
        /// Close the participant's connection (it was declared gone).
        case disconnect(reason: String)
    }

    public var to: LineParticipantID
    public var action: Action

    public init(to: LineParticipantID, _ action: Action) {
        self.to = to
        self.action = action
    }

    static func send(_ event: LineEvent, to: LineParticipantID) -> LineDelivery { LineDelivery(to: to, .send(event)) }

    /// The event, for a `send`.
    public var event: LineEvent? {
        if case .send(let event) = action { return event }
        return nil
    }
}
