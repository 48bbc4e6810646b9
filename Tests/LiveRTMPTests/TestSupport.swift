@testable import LiveRTMP

/// A deterministic byte source for the handshake (a 64-bit LCG).
final class SeededBytes {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    func next(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }
}

/// The messages a fresh decoder produces from `pieces` fed one after another.
func decodeMessages(_ pieces: [ArraySlice<UInt8>]) throws -> [RTMPRawMessage] {
    var decoder = RTMPChunkDecoder()
    var messages: [RTMPRawMessage] = []
    for piece in pieces {
        decoder.feed(piece)
        while let message = try decoder.nextMessage() { messages.append(message) }
    }
    return messages
}

/// Every way of feeding `bytes` the tests check: whole, split in two at each offset,
/// and one byte at a time. Each entry is the list of messages that feeding gave.
func decodeAtEverySplit(_ bytes: [UInt8]) throws -> [[RTMPRawMessage]] {
    var results = [try decodeMessages([bytes[...]])]
    for offset in 0...bytes.count {
        results.append(try decodeMessages([bytes[..<offset], bytes[offset...]]))
    }
    results.append(try decodeMessages(bytes.indices.map { bytes[$0...$0] }))
    return results
}

func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }

func ramp(_ count: Int, from start: Int = 0) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: start + $0) } }
