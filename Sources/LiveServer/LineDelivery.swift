import LiveCore
import LiveSignal

/// A participant of the line: one WebSocket connection, numbered by `LineService`.
public struct LineParticipantID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let value: UInt64

    public init(_ value: UInt64) { self.value = value }

    public static func < (a: LineParticipantID, b: LineParticipantID) -> Bool { a.value < b.value }
    public var description: String { "#\(value)" }
}

/// What the line's state machine asks the transport to do, in order. One event goes to
/// all its recipients as one delivery, so the transport encodes it once.
public struct LineDelivery: Equatable, Sendable {
    public enum Action: Equatable, Sendable {
        /// Send the event as a JSON text message.
        case send(LineEvent)
        /// Close the participant's connection (it was declared gone), saying `reason` and
        /// the anyRTC SDK's `code` (the WebSocket close code is `closeCodeBase` + code).
        case disconnect(reason: String, code: LiveCode)
        /// The co-host stream `pubId` lost its co-host: the relay ends its publisher.
        /// Has no recipients.
        case endStream(pubId: String)
    }

    /// The WebSocket close code of a `disconnect` is this plus the SDK code (`LineCloseCode`).
    public static let closeCodeBase = LineCloseCode.base

    public var recipients: [LineParticipantID]
    public var action: Action

    public init(to recipients: [LineParticipantID], _ action: Action) {
        self.recipients = recipients
        self.action = action
    }

    public init(to recipient: LineParticipantID, _ action: Action) {
        self.init(to: [recipient], action)
    }

    static func send(_ event: LineEvent, to recipient: LineParticipantID) -> LineDelivery { LineDelivery(to: recipient, .send(event)) }
    static func send(_ event: LineEvent, to recipients: [LineParticipantID]) -> LineDelivery { LineDelivery(to: recipients, .send(event)) }

    /// True when `participant` is one of the recipients.
    public func reaches(_ participant: LineParticipantID) -> Bool { recipients.contains(participant) }

    /// The event, for a `send`.
    public var event: LineEvent? {
        if case .send(let event) = action { return event }
        return nil
    }
}
