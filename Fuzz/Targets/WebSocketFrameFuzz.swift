// libFuzzer entry point: the WebSocket frame decoder (server and client roles) and the
// message assembler on arbitrary bytes. Feeding whole or in two pieces must decode the
// same frames and fail the same way; every decoded frame re-encodes to bytes that
// decode to the same frame; nothing longer than the limits gets through.
import LiveNet

private let maxPayload = 4096

private struct Outcome: Equatable {
    var frames: [WebSocketFrame] = []
    var messages: [WebSocketMessage] = []
    var error: WebSocketError?
}

private func decode(_ pieces: [ArraySlice<UInt8>], requireMask: Bool) -> Outcome {
    var decoder = WebSocketFrameDecoder(requireMask: requireMask, maxPayload: maxPayload)
    var assembler = WebSocketMessageAssembler(maxMessage: maxPayload)
    var outcome = Outcome()
    for piece in pieces {
        decoder.append(piece)
        do throws(WebSocketError) {
            while let frame = try decoder.next() {
                if frame.payload.count > maxPayload { fatalError("a frame of \(frame.payload.count) bytes got through") }
                if frame.opcode.isControl, frame.payload.count > WebSocketFrame.maxControlPayload || !frame.fin {
                    fatalError("a bad control frame got through")
                }
                outcome.frames.append(frame)
                if let message = try assembler.push(frame) { outcome.messages.append(message) }
            }
        } catch {
            outcome.error = error
            return outcome
        }
        // Buffered bytes: at most one frame's header (14) and payload, plus this piece.
        if decoder.bufferedCount > 14 + maxPayload + piece.count { fatalError("the decoder holds \(decoder.bufferedCount) bytes") }
    }
    return outcome
}

private func checkRoundTrip(_ frame: WebSocketFrame, masked: Bool) {
    var decoder = WebSocketFrameDecoder(requireMask: masked, maxPayload: maxPayload)
    decoder.append(frame.encoded(maskingKey: masked ? [0x12, 0x34, 0x56, 0x78] : nil))
    guard case .some(.some(let again)) = try? decoder.next(), again == frame, decoder.bufferedCount == 0 else {
        fatalError("\(frame) did not survive encoding")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocketFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let input = bytes[1...]
    let split = min(input.count, Int(first))
    for requireMask in [true, false] {
        let whole = decode([input], requireMask: requireMask)
        let halves = decode([input.prefix(split), input.dropFirst(split)], requireMask: requireMask)
        if whole != halves { fatalError("split at \(split) changed the outcome: \(whole) vs \(halves)") }
        for frame in whole.frames { checkRoundTrip(frame, masked: requireMask) }
    }
    return 0
}
