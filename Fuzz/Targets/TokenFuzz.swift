// libFuzzer entry point: access tokens as a relay receives them (the text of ?token= or a
// Bearer header), verified against a fixed secret; also the query parser and `peek`.
import LiveAuth

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzToken(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let verifier = TokenVerifier(secret: Array("fuzz-secret-0123456789abcdef".utf8))
    if let claims = try? verifier.verify(text, nowSeconds: 1_767_225_600) {
        // Only a token signed with the secret may pass: the fuzzer cannot forge one.
        fatalError("a token the fuzzer made verified: \(claims)")
    }
    _ = AccessToken.peek(text)
    _ = AccessToken.fromQuery(text)
    _ = AccessToken.query(text, setting: "t")
    return 0
}
