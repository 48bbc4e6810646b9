// libFuzzer entry point: the HTTP/1.1 request parser, with a router deciding bodies,
// on arbitrary bytes. The same input fed whole and in pieces (split where the first
// byte says, then byte by byte) must give the same requests and the same error, and
// the parser must never keep more than one head plus the body its route allows.
import LiveNet

private let router: HTTPRouter = {
    var router = HTTPRouter()
    router.get("/healthz") { _ in .response(.text("ok")) }
    router.get("/api/live/{id}/members") { _ in .response(.text("members")) }
    router.post("/echo", maxBodyBytes: 64) { _ in .response(.text("echo")) }
    router.get("/static/*") { _ in .response(.text("file")) }
    return router
}()

private let limits = HTTPRequestParser.Limits(maxHeadBytes: 1024, maxHeaderCount: 16, maxBodyBytes: 256)

private struct Outcome: Equatable {
    var requests: [HTTPRequest] = []
    var error: HTTPRequestParser.Error?
}

private func parse(_ pieces: [ArraySlice<UInt8>]) -> Outcome {
    var parser = HTTPRequestParser(limits: limits) { request, length in
        router.bodyRefusal(method: request.method, path: request.path, length: length)
    }
    var outcome = Outcome()
    for piece in pieces {
        parser.append(contentsOf: piece)
        // A head waits for its blank line (at most maxHeadBytes plus the piece that
        // crossed it), a body for its length (at most the route's 64 bytes).
        if parser.bufferedByteCount > limits.maxHeadBytes + 64 + piece.count {
            fatalError("the parser holds \(parser.bufferedByteCount) bytes")
        }
        while true {
            do {
                guard case .request(let request) = try parser.next() else { break }
                if request.body.count > 64 { fatalError("a body of \(request.body.count) bytes got through") }
                _ = router.match(method: request.method, path: request.path)
                outcome.requests.append(request)
            } catch {
                if parser.bufferedByteCount != 0 { fatalError("a failed parser still holds bytes") }
                outcome.error = error
                return outcome
            }
        }
    }
    return outcome
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPRequestParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let input = bytes[1...]
    let split = min(input.count, Int(first))
    let whole = parse([input])
    let halves = parse([input.prefix(split), input.dropFirst(split)])
    if whole != halves { fatalError("split at \(split) changed the outcome: \(whole) vs \(halves)") }
    if input.count <= 512 {
        let single = parse(input.indices.map { input[$0...$0] })
        if whole != single { fatalError("byte-by-byte feeding changed the outcome: \(whole) vs \(single)") }
    }
    return 0
}
