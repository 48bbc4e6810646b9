// libFuzzer entry point: the HLS segmenter (and the MPEG-TS muxer under it) on arbitrary
// relayed messages, as a publisher could send them. The input is a run of records: one
// byte for the message's kind (its value mod 6: metadata, video header, audio header,
// keyframe, inter frame, audio) and the clock (its high bit: a jump to any timestamp),
// one byte of timestamp step in ms, one byte of payload length, then the payload. The
// payload of a header or frame record is classified by the relay itself in real use;
// here any kind meets any bytes. Checked on every step: a closed segment is whole
// 188-byte packets each starting with the sync byte and within the segment cap, and the
// segment being cut never holds more than the cap.
import LiveServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHLSSegmenter(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let kinds: [RelayMessage.Kind] = [.metadata, .videoHeader, .audioHeader, .keyframe, .interframe, .audio]
    let cap = 16 << 10
    var segmenter = HLSSegmenter(limits: .init(targetMilliseconds: 100, maxSegmentBytes: cap))
    var time: UInt32 = 0
    var at = 0
    while at + 3 <= bytes.count {
        let kind = kinds[Int(bytes[at] & 0x7F) % kinds.count]
        if bytes[at] & 0x80 != 0 {
            time = UInt32(bytes[at + 1]) << 24 | UInt32(bytes[at + 2]) << 8
        } else {
            time &+= UInt32(bytes[at + 1])
        }
        let length = min(Int(bytes[at + 2]), bytes.count - at - 3)
        let payload = Array(bytes[(at + 3)..<(at + 3 + length)])
        at += 3 + length
        if kind == .metadata && payload.first == 0xFF {
            segmenter.lost()
            continue
        }
        if let segment = segmenter.add(kind: kind, timestamp: time, payload: payload) {
            guard segment.bytes.count % 188 == 0, segment.bytes.count <= cap,
                  stride(from: 0, to: segment.bytes.count, by: 188).allSatisfy({ segment.bytes[$0] == 0x47 }) else {
                fatalError("a segment of \(segment.bytes.count) bytes is not whole MPEG-TS packets within the cap")
            }
        }
        if segmenter.pendingBytes > cap { fatalError("the segment being cut holds \(segmenter.pendingBytes) bytes, over the cap") }
    }
    return 0
}
