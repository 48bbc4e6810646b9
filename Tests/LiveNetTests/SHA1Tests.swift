import Foundation
import Testing
@testable import LiveNet

@Suite("SHA-1 and the handshake key")
struct SHA1Tests {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test("RFC 3174 test vectors")
    func vectors() {
        #expect(hex(SHA1.digest(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(SHA1.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
            == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(hex(SHA1.digest([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
        #expect(hex(SHA1.digest([UInt8]())) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        // 64 bytes: the padding spills into a second block.
        #expect(hex(SHA1.digest(Array(String(repeating: "0123456701234567", count: 4).utf8)))
            == "e0c094e867ef46c350ef54a7f59dd60bed92ae83")
    }

    @Test("Sec-WebSocket-Accept of RFC 6455 §1.3's example key")
    func acceptKey() {
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }
}
