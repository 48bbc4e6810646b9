import Foundation
import LiveCore
import LiveNet
import LiveServer

/// A kit's connection to the co-host line: a `LineClient` on an event loop of its own,
/// with the server's events turned into `LineSessionEvent`s and every refused request
/// reported as `.refused` (so no seed return code is lost).
///
/// Callbacks run on the loop thread. Thread-safe: requests may be sent from any thread.
final class LineSession: @unchecked Sendable {
    // @unchecked: `client` and `loop` are immutable; LineClient is thread-safe.
    let server: LineServer
    let client: LineClient
    private let loop: EventLoop

    /// `onEvent` gets every server event first as the raw `LineEvent` (for the kit's own
    /// bookkeeping) and then, through the kit, as a `LineSessionEvent`.
    init(server: LineServer, heartbeat: Duration = .seconds(5),
         onEvent: @escaping @Sendable (LineEvent) -> Void,
         onLost: @escaping @Sendable (String) -> Void) throws {
        self.server = server
        loop = try EventLoop(name: "liveline-line")
        loop.start()
        client = LineClient(url: server.signalURL, loop: loop, heartbeatInterval: heartbeat)
        client.onEvent = onEvent
        let url = server.signalURL
        client.onClose = { code, reason in onLost("the line connection to \(url) closed (\(code) \(reason))") }
        client.connect { result in
            if case .failure(let error) = result { onLost("connecting to \(url) failed: \(error)") }
        }
    }

    /// A reply handler that reports a non-zero answer as `.refused` to `report`.
    static func refusal(_ report: @escaping @Sendable (LineSessionEvent) -> Void) -> @Sendable (LineEvent) -> Void {
        { reply in
            guard let code = reply.liveCode, code != .ok else { return }
            report(.refused(op: reply.op ?? "?", code: code, message: reply.message ?? code.message))
        }
    }

    /// Closes the connection and stops the loop. Not on the loop thread (it joins it).
    func close() {
        // A close asked for is no loss to report.
        client.onClose = nil
        client.disconnect()
        if loop.inEventLoop {
            loop.shutdown()
        } else {
            // Let the close frame go out before the loop stops.
            let flushed = DispatchSemaphore(value: 0)
            if loop.execute({ flushed.signal() }) { _ = flushed.wait(timeout: .now() + 1) }
            loop.shutdown()
        }
    }
}
