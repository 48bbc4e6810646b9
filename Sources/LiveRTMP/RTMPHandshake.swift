import LiveCore

/// What the RTMP handshake (RTMP 1.0 §5.2) shares between client and server: packet
/// sizes, the step result, errors, and the Flash Player 9 "digest" handshake that
/// Flash-era clients, ffmpeg (libavformat/rtmpproto.c) and nginx-rtmp speak.
///
/// The digest handshake hides an HMAC-SHA256 of C1/S1 inside the 1536-byte packet. The
/// packet after time and version is two 764-byte blocks, a key block and a digest
/// block, in either order ("schema"): the digest block starts with four bytes whose sum
/// modulo 728 locates the 32-byte digest inside it. The digest is the HMAC of the
/// packet minus those 32 bytes, keyed with the first 30 bytes of the player key
/// (client) or 36 bytes of the server key (server). S2 and C2 end in an HMAC of their
/// first 1504 bytes keyed with the HMAC of the peer's digest under the full key.
public enum RTMPHandshake {
    /// The size of C1, C2, S1 and S2.
    public static let packetSize = 1536
    /// The plain-RTMP version byte of C0 and S0.
    public static let version: UInt8 = 3

    /// Which handshake a client offers.
    public enum Style: Sendable, Equatable {
        /// Time, zero version and random bytes; the peer echoes them.
        case simple
        /// C1 carries a digest (as ffmpeg's and Flash Player's do); falls back to the
        /// simple echo when the server's S1 has none.
        case digest
    }

    /// The result of feeding bytes to a handshake.
    public struct Step: Equatable, Sendable {
        /// Bytes to send to the peer now (possibly empty).
        public var output: [UInt8]
        /// True once the handshake is complete: RTMP chunks follow.
        public var done: Bool
        /// Bytes received after the handshake's last packet: the first chunk bytes,
        /// to be fed to the chunk decoder.
        public var leftover: [UInt8]

        public init(output: [UInt8] = [], done: Bool = false, leftover: [UInt8] = []) {
            self.output = output
            self.done = done
            self.leftover = leftover
        }
    }

    /// Why a handshake failed.
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        /// C0/S0 asked for a version other than 3 (6 and 8 are the encrypted RTMPE forms).
        case unsupportedVersion(UInt8)
        /// `feed` was called before `start` or after completion.
        case outOfOrder(String)

        public var description: String {
            switch self {
            case .unsupportedVersion(72):
                "the peer answered with 'H', as a web server does, not with an RTMP version: is this an HTTP port?"
            case .unsupportedVersion(0x15), .unsupportedVersion(0x16):
                "the peer answered with TLS, not RTMP: is this an RTMPS or HTTPS port? (LiveLine speaks plain rtmp://)"
            case .unsupportedVersion(let v): "the peer asked for RTMP version \(v) in its handshake, only 3 (plain) is supported"
            case .outOfOrder(let why): "handshake step out of order: \(why)"
            }
        }
    }

    /// Where the digest block sits in C1/S1.
    public enum Schema: Sendable, Equatable {
        /// Digest block at byte 8, key block after it (ffmpeg's and nginx-rtmp's C1;
        /// "schema 1" in SRS).
        case digestFirst
        /// Key block at byte 8, digest block at byte 772 ("schema 0" in SRS).
        case keyFirst

        var blockStart: Int { self == .digestFirst ? 8 : 772 }
    }

    /// "Genuine Adobe Flash Player 001" and the 32 bytes that follow it.
    static let playerKey: [UInt8] = Array("Genuine Adobe Flash Player 001".utf8) + keyTail
    /// "Genuine Adobe Flash Media Server 001" and the 32 bytes that follow it.
    static let serverKey: [UInt8] = Array("Genuine Adobe Flash Media Server 001".utf8) + keyTail
    static let playerPartialKey = Array(playerKey.prefix(30))
    static let serverPartialKey = Array(serverKey.prefix(36))
    private static let keyTail: [UInt8] = [
        0xF0, 0xEE, 0xC2, 0x4A, 0x80, 0x68, 0xBE, 0xE8, 0x2E, 0x00, 0xD0, 0xD1, 0x02, 0x9E, 0x7E, 0x57,
        0x6E, 0xEC, 0x5D, 0x2D, 0x29, 0x80, 0x6F, 0xAB, 0x93, 0xB8, 0xE6, 0x36, 0xCF, 0xEB, 0x31, 0xAE,
    ]

    /// The version ffmpeg writes in its C1 (Flash Player 9.0.124.2).
    static let clientVersion: [UInt8] = [9, 0, 124, 2]
    /// The version nginx-rtmp writes in its S1; a first byte ≥ 3 is what makes ffmpeg
    /// check the server digest.
    static let serverVersion: [UInt8] = [0x0D, 0x0E, 0x0A, 0x0D]

    /// The default source of handshake randomness: one draw from the system generator
    /// seeds a SplitMix64 stream for the rest. The fill is echo data, not a secret; a
    /// system call per byte (`UInt8.random` on the system generator) made the handshake
    /// the most expensive step of a player's join.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var system = SystemRandomNumberGenerator()
        var state = system.next()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 7)
        while bytes.count < count {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            withUnsafeBytes(of: z.littleEndian) { bytes.append(contentsOf: $0) }
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }

    // MARK: - Framing

    /// Takes the peer's version byte and first packet (C0+C1 or S0+S1) off the front of
    /// `buffer`: the packet, or nil while part of it is still to come.
    static func takeVersionAndPacket(from buffer: inout [UInt8]) throws -> [UInt8]? {
        guard let peerVersion = buffer.first else { return nil }
        guard peerVersion == version else { throw Error.unsupportedVersion(peerVersion) }
        guard buffer.count >= 1 + packetSize else { return nil }
        let packet = Array(buffer[1...packetSize])
        buffer.removeFirst(1 + packetSize)
        return packet
    }

    /// Takes the peer's last packet (C2 or S2) out of `buffer` and completes `step`: done,
    /// with the bytes after the packet as leftover. Nil, leaving both alone, while part of
    /// the packet is still to come.
    static func takeLastPacket(from buffer: inout [UInt8], completing step: inout Step) -> [UInt8]? {
        guard buffer.count >= packetSize else { return nil }
        let packet = Array(buffer[0..<packetSize])
        step.leftover = Array(buffer[packetSize...])
        step.done = true
        buffer = []
        return packet
    }

    // MARK: - Digest arithmetic

    /// The offset of the 32-byte digest in a 1536-byte packet under `schema`.
    static func digestOffset(in packet: [UInt8], schema: Schema) -> Int {
        let base = schema.blockStart
        let sum = Int(packet[base]) + Int(packet[base + 1]) + Int(packet[base + 2]) + Int(packet[base + 3])
        return sum % 728 + base + 4
    }

    /// The HMAC of `packet` without the 32 bytes at `offset`.
    static func digest(of packet: [UInt8], skipping offset: Int, key: [UInt8]) -> [UInt8] {
        HMACSHA256.mac(key: key, packet[0..<offset], packet[(offset + HMACSHA256.size)...])
    }

    /// The schema and offset of a valid digest in `packet` under `key`, trying the
    /// digest-first layout first, or nil when neither holds one.
    static func findDigest(in packet: [UInt8], key: [UInt8], order: [Schema] = [.digestFirst, .keyFirst])
        -> (schema: Schema, offset: Int)?
    {
        guard packet.count == packetSize else { return nil }
        for schema in order {
            let offset = digestOffset(in: packet, schema: schema)
            if digest(of: packet, skipping: offset, key: key)[...] == packet[offset..<offset + HMACSHA256.size] {
                return (schema, offset)
            }
        }
        return nil
    }

    /// Writes the digest of `packet` under `key` at its `schema` position; returns that offset.
    @discardableResult
    static func imprintDigest(into packet: inout [UInt8], schema: Schema, key: [UInt8]) -> Int {
        let offset = digestOffset(in: packet, schema: schema)
        let mac = digest(of: packet, skipping: offset, key: key)
        packet.replaceSubrange(offset..<offset + HMACSHA256.size, with: mac)
        return offset
    }

    /// The signature that ends S2 or C2: the HMAC of its first 1504 bytes, keyed with the
    /// HMAC of the peer's digest under the full key.
    static func signature(of packet: [UInt8], peerDigest: ArraySlice<UInt8>, fullKey: [UInt8]) -> [UInt8] {
        let key = HMACSHA256.mac(key: fullKey, peerDigest)
        return HMACSHA256.mac(key: key, packet[0..<packetSize - HMACSHA256.size])
    }

    /// A 1536-byte packet: time, version, then random bytes.
    static func packet(time: UInt32, version: [UInt8], random: (Int) -> [UInt8]) -> [UInt8] {
        var packet = [UInt8(time >> 24), UInt8((time >> 16) & 0xFF), UInt8((time >> 8) & 0xFF), UInt8(time & 0xFF)]
        packet += version
        packet += random(packetSize - 8).prefix(packetSize - 8)
        // A short random source must not make a short packet.
        if packet.count < packetSize { packet += [UInt8](repeating: 0, count: packetSize - packet.count) }
        return packet
    }
}
