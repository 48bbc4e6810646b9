import LiveCore

/// One HTTP connection: parses requests as bytes arrive and answers them in order.
/// Confined to the connection's loop thread (every method is a handler callback or
/// runs in a task on that loop).
final class HTTPServerSession: TCPConnectionHandler, @unchecked Sendable {
    // @unchecked: confined to the loop thread, as said above; the deferred responder
    // and the eviction closure (called by another connection's accept) capture it
    // only to hop back onto that loop.
    private let router: HTTPRouter
    private let counts: HTTPConnectionCounts
    private var parser: HTTPRequestParser
    /// A deferred reply is outstanding: later requests wait in the parser.
    private var awaitingReply = false
    /// The request deadline (nil: none) and when the request being received began (the
    /// accept, or its first byte); nil while the client owes us nothing.
    private let requestTimeout: Duration?
    private var requestStartedAt: UInt64?
    private var requestTimer: TimerHandle?
    /// Set while the connection waits for its client (no request being answered): a
    /// newcomer at the connection cap may then take its place.
    private var waitToken: UInt64?

    init(router: HTTPRouter, limits: HTTPRequestParser.Limits, counts: HTTPConnectionCounts, requestTimeout: Duration?) {
        self.router = router
        self.counts = counts
        self.requestTimeout = requestTimeout
        parser = HTTPRequestParser(limits: limits) { request, length in
            router.bodyRefusal(method: request.method, path: request.path, length: length)
        }
    }

    /// Starts the first request's clock. Loop thread, right after the accept.
    func start(_ connection: TCPConnection) {
        requestStartedAt = connection.loop.now
        armRequestTimer(connection)
        startWaiting(connection)
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

    func onClose(_ connection: TCPConnection, _ error: NetError?) {
        requestTimer?.cancel()
        requestTimer = nil
        stopWaiting()
        counts.apiClosed()
    }

    private func answerBufferedRequests(_ connection: TCPConnection) {
        while !awaitingReply, connection.state == .open, connection.isWritable, connection.handler === self {
            let decoded: HTTPRequestParser.Decoded
            do {
                decoded = try parser.next()
            } catch {
                refuse(error.status, error.reason, headers: error.headers, connection)
                return
            }
            guard case .request(let request) = decoded else { break }
            dispatch(request, connection)
        }
        guard connection.handler === self else { return }
        // The clock runs only while the client owes the rest of a request; a deferred
        // reply or a full write queue is the server's turn.
        if awaitingReply || !connection.isWritable || !parser.isInsideRequest {
            requestStartedAt = nil
        } else if requestStartedAt == nil {
            requestStartedAt = connection.loop.now
            armRequestTimer(connection)
        }
        if awaitingReply || connection.state != .open {
            stopWaiting()
        } else {
            startWaiting(connection)
        }
    }

    /// Answers `status` with `reason` and closes: the stream can no longer be trusted to
    /// be at a request boundary (a refused body is never read).
    private func refuse(_ status: HTTPStatus, _ reason: String, headers: HTTPHeaders = HTTPHeaders(), _ connection: TCPConnection) {
        var response = HTTPResponse.text("\(reason)\n", status: status)
        for field in headers { response.headers.set(field.name, field.value) }
        response.headers.set("Connection", "close")
        connection.write(response.encoded(keepAlive: false))
        connection.close()
    }

    private func dispatch(_ request: HTTPRequest, _ connection: TCPConnection) {
        // Being answered: not a connection to evict; it waits again (from now) after.
        stopWaiting()
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
                upgrade(response, takeOver, connection)
            }
        }
    }

    private func upgrade(_ response: HTTPResponse, _ takeOver: @Sendable (TCPConnection, [UInt8]) -> TCPConnectionHandler,
                         _ connection: TCPConnection) {
        guard counts.upgrade() else {
            refuse(.serviceUnavailable, "too many upgraded connections", connection)
            return
        }
        requestTimer?.cancel()
        requestTimer = nil
        requestStartedAt = nil
        stopWaiting()
        let counts = self.counts
        let previous = connection.onClosed
        connection.onClosed = {
            counts.upgradedClosed()
            previous?()
        }
        connection.write(response.encoded(keepAlive: true))
        let buffered = parser.takeBufferedBytes()
        let next = takeOver(connection, buffered)
        connection.handler = next
        if !buffered.isEmpty, connection.state == .open {
            buffered.withUnsafeBytes { next.onRead(connection, $0) }
        }
    }

    private func deferredResponder(for request: HTTPRequest, _ connection: TCPConnection) -> @Sendable (HTTPResponse) -> Void {
        let once = HTTPDeferredReplyLatch()
        return { [weak self] response in
            guard once.claim(), let session = self else { return }
            // Refused only when the loop is gone or its queue is full; the connection,
            // reading paused, then receives nothing and its idle timeout closes it.
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

    // MARK: eviction at the connection cap

    private func startWaiting(_ connection: TCPConnection) {
        guard waitToken == nil, connection.state == .open, connection.handler === self else { return }
        waitToken = counts.startWaiting(since: connection.loop.now) { [self] in
            // Not droppable: the newcomer already holds this connection's slot.
            _ = connection.loop.submit(bounded: false) { self.evicted(connection) }
        }
    }

    private func stopWaiting() {
        guard let waitToken else { return }
        counts.stopWaiting(waitToken)
        self.waitToken = nil
    }

    /// A newcomer took this connection's slot: a client inside a request is told (408),
    /// an idle keep-alive connection just closes (RFC 9112 §9.6 allows it).
    private func evicted(_ connection: TCPConnection) {
        waitToken = nil
        guard connection.state == .open, connection.handler === self else { return }
        if parser.isInsideRequest || requestStartedAt != nil {
            Log.info("http \(connection.peerAddress): closed to make room for a new connection")
            refuse(.requestTimeout, "no whole request before the server needed this connection", connection)
        } else {
            connection.close()
        }
    }

    // MARK: request deadline

    private func armRequestTimer(_ connection: TCPConnection) {
        guard let requestTimeout, requestTimer == nil, let started = requestStartedAt else { return }
        let deadline = started + EventLoop.micros(requestTimeout)
        let now = connection.loop.now
        requestTimer = connection.loop.schedule(afterMicros: deadline > now ? deadline - now : 0) { [self] in
            requestTimer = nil
            checkRequestDeadline(connection)
        }
    }

    private func checkRequestDeadline(_ connection: TCPConnection) {
        guard connection.state == .open, connection.handler === self, let requestTimeout,
              let started = requestStartedAt else { return }
        if connection.loop.now >= started + EventLoop.micros(requestTimeout) {
            Log.info("http \(connection.peerAddress): no whole request within \(requestTimeout); closing")
            refuse(.requestTimeout, "no whole request within \(requestTimeout)", connection)
        } else {
            armRequestTimer(connection)
        }
    }
}
