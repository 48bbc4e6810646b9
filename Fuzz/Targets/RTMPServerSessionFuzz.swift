// libFuzzer entry point: one RTMP server connection fed a whole byte stream, as
// `liveline serve` feeds it: the handshake server (when the first byte's bit 0 is set)
// and then RTMPServerSessionCore, its publish and play requests accepted (or refused
// when bit 1 is set), every reply taken. The bytes after the two-byte prefix arrive in
// two reads split where the second byte says. Limits are small so 8 KiB inputs reach
// them; what the core holds and the names it reports must stay within them, and what
// the server sends back must decode as a client reads it.
//
// Seeds (Fuzz/Seeds/session): ffmpeg's captured handshake and connect
// (Tests/LiveRTMPTests/Fixtures/FFmpegCapture.swift) behind a blank C2, and LiveLine's
// own client cores publishing (connect … publish, metadata, video, FCUnpublish,
// deleteStream) and playing, with and without the handshake.
import LiveRTMP

let configuration = RTMPServerSessionCore.Configuration(
    maxMessageLength: 1 << 20, maxCommandMessageLength: 4096, maxChunkStreams: 8, maxUnfinishedBytes: 16 << 10,
    maxNameLength: 64, maxQueryLength: 128)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRTMPServerSession(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 2 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let handshakeFirst = bytes[0] & 1 != 0
    let refuse = bytes[0] & 2 != 0
    let body = bytes[2...]
    let split = body.startIndex + body.count * Int(bytes[1]) / 256
    var handshake: RTMPHandshakeServer? = handshakeFirst ? RTMPHandshakeServer(random: { [UInt8](repeating: 0x5A, count: $0) }) : nil
    var core = RTMPServerSessionCore(configuration: configuration)
    var client = RTMPChunkDecoder()
    for piece in [body[..<split], body[split...]] {
        var input = Array(piece)
        if var state = handshake {
            guard let step = try? state.feed(input) else { return 0 }
            handshake = step.done ? nil : state
            guard step.done else { continue }
            input = step.leftover
        }
        guard let events = try? core.feed(input) else { return 0 }  // a malformed stream ends the connection
        check(core)
        for event in events {
            switch event {
            case .publishRequested(let streamID, let name, let query, _):
                checkName(name, query)
                if refuse { try? core.rejectPublish(streamID: streamID) } else { try? core.acceptPublish(streamID: streamID) }
            case .playRequested(let streamID, let name, let query):
                checkName(name, query)
                if refuse { try? core.rejectPlay(streamID: streamID) } else { try? core.acceptPlay(streamID: streamID) }
            case .media(let raw):
                if raw.payload.count > configuration.maxMessageLength { fatalError("media of \(raw.payload.count) bytes passed") }
            default:
                break
            }
        }
        client.feed(core.takeOutput())
        do {
            while let raw = try client.nextMessage() { _ = try RTMPMessage(decoding: raw) }
        } catch {
            fatalError("the server's own output does not decode: \(error)")
        }
    }
    return 0
}

func check(_ core: RTMPServerSessionCore) {
    let held = core.decoder.unfinishedByteCount
    // A read may add its own size before the next check; nothing else may pass the budget.
    if core.decoder.unfinishedPayloadBytes > configuration.maxUnfinishedBytes || held > configuration.maxUnfinishedBytes + 8192 {
        fatalError("the core holds \(held) unfinished bytes, over its budget")
    }
}

func checkName(_ name: String, _ query: String?) {
    if name.isEmpty || name.utf8.count > configuration.maxNameLength || (query?.utf8.count ?? 0) > configuration.maxQueryLength {
        fatalError("a name of \(name.utf8.count) bytes or a query of \(query?.utf8.count ?? 0) bytes passed")
    }
}
