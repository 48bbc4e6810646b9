// libFuzzer entry point: FLV video/audio tag parsing, the AVC configuration record and
// AVCC → Annex B conversion, the AAC AudioSpecificConfig, and the player's checked
// reading of an audio message (RTMPAudioMessage) on arbitrary bytes; and the HTTP-FLV
// player's readers: an input starting "HTTP/" is a response (HTTPResponseReader) whose
// body is an FLV stream, any other input is the FLV stream itself (FLVTagReader). The
// stream is read whole and split where its first byte says, with the same tags and the
// same error both ways, and the readers never hold more than their budgets allow.
import LiveNet
import LiveRTMP

private let maxTagBytes = 4096

private struct Outcome: Equatable {
    var tags: [FLVTagReader.Tag] = []
    var error: String?
}

/// The FLV stream (inside an HTTP response when it starts "HTTP/") fed in `pieces`.
private func read(_ pieces: [ArraySlice<UInt8>], http: Bool) -> Outcome {
    var response = HTTPResponseReader(maxHeadBytes: 1024)
    var flv = FLVTagReader(maxTagBytes: maxTagBytes)
    var outcome = Outcome()
    func feed(_ bytes: some Collection<UInt8>) -> Bool {
        flv.append(contentsOf: bytes)
        do {
            while let tag = try flv.next() {
                if tag.payload.count > maxTagBytes { fatalError("a tag of \(tag.payload.count) bytes got through") }
                outcome.tags.append(tag)
            }
        } catch {
            if flv.bufferedByteCount != 0 { fatalError("a failed FLV reader still holds bytes") }
            outcome.error = "flv: \(error)"
            return false
        }
        // Short of a whole tag: the reader waits for at most one tag and its header.
        if flv.bufferedByteCount > maxTagBytes + 15 + bytes.count + Int(FLVTagReader.maxHeaderBytes) {
            fatalError("the FLV reader holds \(flv.bufferedByteCount) bytes")
        }
        return true
    }
    for piece in pieces {
        guard http else {
            if !feed(piece) { return outcome }
            continue
        }
        response.append(contentsOf: piece)
        if response.bufferedByteCount > 1024 + piece.count + 4 {
            fatalError("the response reader holds \(response.bufferedByteCount) bytes")
        }
        do {
            loop: while true {
                switch try response.next() {
                case .head: break
                case .body(let body): if !feed(body) { return outcome }
                case .end, .needMore: break loop
                }
            }
        } catch {
            outcome.error = "http: \(error)"
            return outcome
        }
    }
    return outcome
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFLVTag(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let tag = try? FLVVideoTag(parsing: bytes) {
        if tag.payload.count != bytes.count && tag.codecID == FLVVideoTag.CodecID.avc {
            fatalError("FLV video tag re-encoding changed its length")
        }
        if let configuration = try? tag.decoderConfiguration() {
            _ = configuration.annexB
        }
        for lengthSize in [1, 2, 4] { _ = try? tag.annexB(lengthSize: lengthSize) }
    }
    if let audio = try? FLVAudioTag(parsing: bytes) {
        _ = try? AACAudioSpecificConfig(parsing: audio.data)
    }
    if case .configuration(let config, let asc)? = try? RTMPAudioMessage(parsing: bytes) {
        if asc.count > RTMPAudioMessage.maxConfigurationBytes || !(1...2).contains(config.channelConfiguration) {
            fatalError("RTMPAudioMessage let a header past its bounds")
        }
    }
    _ = FLVVideoTag.nalUnitsPayload(fromAnnexB: bytes, keyframe: true, compositionTime: -1)
    _ = try? FLVVideoTag.sequenceHeaderPayload(fromAnnexB: bytes)

    // The HTTP-FLV readers.
    guard let first = bytes.first else { return 0 }
    let input = bytes[1...]
    let http = input.starts(with: Array("HTTP/".utf8))
    let whole = read([input], http: http)
    let split = min(input.count, Int(first) * 7)
    let halves = read([input.prefix(split), input.dropFirst(split)], http: http)
    if whole != halves { fatalError("split at \(split) changed the outcome: \(whole) vs \(halves)") }
    for tag in whole.tags {
        _ = try? FLVVideoTag(parsing: tag.payload)
        _ = try? RTMPAudioMessage(parsing: tag.payload)
    }
    return 0
}
