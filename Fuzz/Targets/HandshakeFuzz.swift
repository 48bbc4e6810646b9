// libFuzzer entry point: the handshake server (and a digest client) fed arbitrary bytes.
import LiveRTMP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHandshake(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let zeros: (Int) -> [UInt8] = { [UInt8](repeating: 0x5A, count: $0) }
    var server = RTMPHandshakeServer(random: zeros)
    _ = try? server.feed(bytes)
    var client = RTMPHandshakeClient(style: .digest, random: zeros)
    _ = client.start()
    _ = try? client.feed(bytes)
    return 0
}
