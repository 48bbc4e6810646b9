import LiveSignal

/// The 1v1 call's state machine (the Agora CallAPI's): pure, no I/O, clocks or threads.
public struct CallStateMachine: Sendable {
    public let userId: String
    public private(set) var state: CallState = .idle

    public init(userId: String) {
        self.userId = userId
    }
}
