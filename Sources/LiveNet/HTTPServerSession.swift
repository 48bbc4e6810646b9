/// One HTTP connection: parses requests as bytes arrive and answers them in order.
/// Confined to the connection's loop thread (every method is a handler callback or
/// runs in a task on that loop).
final class HTTPServerSession: TCPConnectionHandler, @unchecked Sendable {
    // @unchecked: confined to the loop thread, as said above; the deferred responder
    // captures it only to hop back onto that loop.
    private let router: HTTPRouter
    private var parser: HTTPRequestParser
    /// A deferred reply is outstanding: later requests wait in the parser.
    private var awaitingReply = false

    init(router: HTTPRouter, limits: HTTPRequestParser.Limits) {
        self.router = router
        parser = HTTPRequestParser(limits: limits)
    }

    func onRead(_ connection: TCPConnection, _ bytes: UnsafeRawBufferPointer) {
        parser.append(bytes)
        answerBufferedRequests(connection)
    }

    func onWritabilityChanged(_ connection: TCPConnection, _ isWritable: Bool) {
        // A client that pipelines requests without reading the answers is paused at the
        // write queue's high watermark instead of growing it.
        if isWritable {
            connection.resumeReading()
            answerBufferedRequests(connection)
        } else {
            connection.pauseReading()
        }
    }

    func onClose(_ connection: TCPConnection, _ error: NetError?) {}

    private func answerBufferedRequests(_ connection: TCPConnection) {
        while !awaitingReply, connection.state == .open, connection.isWritable, connection.handler === self {
            let decoded: HTTPRequestParser.Decoded
            do {
                decoded = try parser.next()
            } catch {
                var response = HTTPResponse.text("\(error.reason)\n", status: error.status)
                response.headers.set("Connection", "close")
                connection.write(response.encoded(keepAlive: false))
                connection.close()
                return
            }
            guard case .request(let request) = decoded else { return }
            dispatch(request, connection)
        }
    }

    private func dispatch(_ request: HTTPRequest, _ connection: TCPConnection) {
        var request = request
        switch router.match(method: request.method, path: request.path) {
        case .notFound:
            respond(.text("no route for \(request.path)\n", status: .notFound), to: request, connection)
        case .methodNotAllowed(let allowed):
            var response = HTTPResponse.text("\(request.method) is not allowed on \(request.path)\n", status: .methodNotAllowed)
            response.headers.set("Allow", allowed.joined(separator: ", "))
            respond(response, to: request, connection)
        case .found(let handler, let parameters):
            request.pathParameters = parameters
            switch handler(request) {
            case .response(let response):
                respond(response, to: request, connection)
            case .deferred(let start):
                awaitingReply = true
                connection.pauseReading()
                start(deferredResponder(for: request, connection))
            case .upgrade(let response, let takeOver):
                connection.write(response.encoded(keepAlive: true))
                let buffered = parser.takeBufferedBytes()
                let next = takeOver(connection, buffered)
                connection.handler = next
                if !buffered.isEmpty, connection.state == .open {
                    buffered.withUnsafeBytes { next.onRead(connection, $0) }
                }
            }
        }
    }

    private func deferredResponder(for request: HTTPRequest, _ connection: TCPConnection) -> @Sendable (HTTPResponse) -> Void {
        let once = HTTPDeferredReplyLatch()
        return { [weak self] response in
            guard once.claim(), let session = self else { return }
            connection.loop.execute {
                guard connection.state == .open else { return }
                session.awaitingReply = false
                session.respond(response, to: request, connection)
                connection.resumeReading()
                session.answerBufferedRequests(connection)
            }
        }
    }

    private func respond(_ response: HTTPResponse, to request: HTTPRequest, _ connection: TCPConnection) {
        let keepAlive = request.keepAlive && !response.headers.tokens("Connection").contains("close")
        connection.write(response.encoded(keepAlive: keepAlive, headOnly: request.method == "HEAD"))
        if !keepAlive { connection.close() }
    }
}
