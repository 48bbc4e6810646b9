// libFuzzer entry point: the RTMP chunk decoder and the typed message decoder on
// arbitrary bytes, fed in two pieces split where the first byte says.
import LiveRTMP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzChunkDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let split = min(bytes.count, Int(first))
    var decoder = RTMPChunkDecoder(maxMessageLength: 1 << 20)
    for piece in [bytes[1..<max(1, split)], bytes[max(1, split)...]] {
        decoder.feed(piece)
        do {
            while let raw = try decoder.nextMessage() {
                _ = try? RTMPMessage(decoding: raw)
                if decoder.acknowledgementDue != nil { decoder.acknowledgementSent() }
            }
        } catch {
            return 0  // a malformed stream ends the connection
        }
    }
    return 0
}
