import Testing
@testable import LiveCore

/// Hex of a digest, for comparing with published vectors.
func hex(_ bytes: [UInt8]) -> String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }

/// Bytes i·7+3 (mod 256): a message that differs at every offset.
func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) } }

@Suite("SHA-1")
struct SHA1Tests {
    @Test("RFC 3174 / FIPS 180-4 test vectors")
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

    /// python3: hashlib.sha1(bytes((i*7+3)&0xFF for i in range(n))).hexdigest()
    @Test("lengths around the block edges (55, 56, 57, 63, 64, 65, 119, 120, 128, 1000), whole and fed in pieces",
          arguments: [
              (55, "ddf57317ef34bfee3b6df83d359098930eb278bc"), (56, "a0d492bb0fc889d0eca3bc137066ab6f4f74f369"),
              (57, "11a02dcf95859677a62e75024067c22b165d890f"), (63, "c55856749bef509bdfe6bfebfc7bf4e793e82132"),
              (64, "bede92be29c3874e1b54ddc77988d606fc857a8e"), (65, "b05a80522b053d6dc7e0a517d0e70212c7dad11f"),
              (119, "504e27376a6e0f0dba8295b85cb25dc4dfa17d23"), (120, "82134b02fb3f702491be9bed581eeab59334acb2"),
              (128, "a09133e6730ffe899efb70204cb5646cd5dc24ee"), (1000, "4231a8a50a10fa9758db8ec71fdef855b751048a"),
          ])
    func blockEdges(length: Int, expected: String) {
        let message = pattern(length)
        #expect(hex(SHA1.digest(message)) == expected)
        for piece in [1, 7, 63, 64, 65] {
            var hash = SHA1()
            for start in stride(from: 0, to: length, by: piece) { hash.update(message[start..<min(start + piece, length)]) }
            #expect(hex(hash.finalize()) == expected, "pieces of \(piece)")
        }
    }
}
