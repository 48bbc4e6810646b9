import Foundation
import LiveCore
import LiveNet

/// Asks an RTMP server what it tells about itself: TCP connect, the handshake and
/// `connect` to the URL's app (its tcUrl, without the stream's query), then a close.
/// The answer is the information object of connect's `_result`: the code
/// NetConnection.Connect.Success and whatever the server adds (LiveLine's relay adds the
/// address of its co-host line signaling; nginx-rtmp, SRS and others add nothing).
///
/// Blocks the calling thread (never an event loop's) for at most `timeout`; the socket
/// runs on a loop of its own that ends with the call.
public enum RTMPConnectProbe {
    /// The information object of the server's connect `_result` for `url`; throws why
    /// there was none (cannot connect, not RTMP, refused, timed out).
    public static func information(of url: RTMPURL, timeout: Duration = .seconds(5)) throws(RTMPClientError) -> AMF0Object {
        let loop: EventLoop
        do throws(NetError) {
            loop = try EventLoop(name: "liveline-probe")
        } catch {
            throw .connectFailed(url: url.description, error)
        }
        loop.start()
        defer { loop.shutdown() }
        let outcome = ProbeOutcome()
        let queued = loop.execute {
            let connection = RTMPClientConnection(url: url, mode: .probe, configuration: .init(), loop: loop)
            connection.onEvents = { [unowned connection] events in
                for event in events {
                    switch event {
                    case .connected:
                        outcome.finish(.success(connection.core.connectInformation ?? AMF0Object()))
                    case .failed(let status):
                        outcome.finish(.failure(.rejected(url: url.description, status)))
                    default:
                        continue
                    }
                    // The answer is all a probe wants: the socket closes at once.
                    return connection.end(nil)
                }
            }
            // Holds the connection until it ends (`end` drops this closure).
            connection.onEnd = { error in
                outcome.finish(.failure(error ?? .connectionLost(url: url.description, nil)))
                withExtendedLifetime(connection) {}
            }
            connection.open(timeout: timeout, options: TCPConnectionOptions())
        }
        guard queued else { throw .connectFailed(url: url.description, .loopShutdown) }
        guard let result = outcome.wait(timeout: timeout + .seconds(1)) else {
            throw .timedOut(url: url.description, what: "RTMP connect")
        }
        return try result.get()
    }
}

/// The first outcome of a probe, handed from the loop to the waiting thread.
private final class ProbeOutcome: Sendable {
    private let result = ConditionLock<Result<AMF0Object, RTMPClientError>?>(nil)

    func finish(_ value: Result<AMF0Object, RTMPClientError>) {
        result.withLock { if $0 == nil { $0 = value } }
    }

    func wait(timeout: Duration) -> Result<AMF0Object, RTMPClientError>? {
        result.withLock(waitingUntil: { $0 != nil }, timeout: timeout) { result, _ in result }
    }
}
