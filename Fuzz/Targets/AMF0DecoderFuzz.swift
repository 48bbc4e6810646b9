// libFuzzer entry point: the AMF0 decoder and the command/data readers on arbitrary
// bytes; whatever decodes must re-encode to bytes that decode to the same encoding.
import LiveRTMP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAMF0Decoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let values = try? AMF0Decoder.decodeAll(bytes) else { return 0 }
    _ = try? RTMPCommand(decoding: values)
    _ = try? RTMPData(decoding: values)
    let encoded = AMF0Encoder.encode(values)
    guard let again = try? AMF0Decoder.decodeAll(encoded), AMF0Encoder.encode(again) == encoded else {
        fatalError("AMF0 re-encoding is not stable for input of \(size) bytes")
    }
    return 0
}
