/// SHA-1 (FIPS 180-4 §6.1, RFC 3174), only for the WebSocket handshake's
/// `Sec-WebSocket-Accept` (RFC 6455 §4.2.2), where the protocol fixes the hash; never use
/// it for security. Pure Swift, so no module needs a C library to hash.
public struct SHA1: BlockHash {
    public static let digestSize = 20
    /// FIPS 180-4 §5.3.1.
    private var chain = HashChain(initial: [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0])

    public init() {}

    public mutating func update<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        chain.update(bytes, Self.compress)
    }

    public mutating func finalize() -> [UInt8] { chain.finalize(Self.compress) }

    /// Folds one 64-byte block into `h` (FIPS 180-4 §6.1.2); the additions are modulo 2³².
    private static func compress(_ h: inout [UInt32], _ block: UnsafeBufferPointer<UInt8>) {
        var w = [UInt32](repeating: 0, count: 80)
        for i in 0..<16 { w[i] = bigEndianWord(block, i * 4) }
        for i in 16..<80 { w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1) }
        var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
        for i in 0..<80 {
            let f: UInt32, k: UInt32
            switch i {
            case 0..<20: f = (b & c) | (~b & d); k = 0x5A82_7999
            case 20..<40: f = b ^ c ^ d; k = 0x6ED9_EBA1
            case 40..<60: f = (b & c) | (b & d) | (c & d); k = 0x8F1B_BCDC
            default: f = b ^ c ^ d; k = 0xCA62_C1D6
            }
            let t = rotl(a, 5) &+ f &+ e &+ k &+ w[i]
            (e, d, c, b, a) = (d, c, rotl(b, 30), a, t)
        }
        h[0] &+= a
        h[1] &+= b
        h[2] &+= c
        h[3] &+= d
        h[4] &+= e
    }

    private static func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { x << n | x >> (32 - n) }
}
