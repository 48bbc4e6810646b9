import LiveCore

/// The client side of the RTMP handshake (RTMP 1.0 §5.2.5) as a pure state machine:
/// `start()` gives C0+C1, `feed(_:)` takes what the server sends and gives C2.
///
/// With `.digest` (the default, as ffmpeg), C1 carries a Flash Player 9 digest. A
/// server that answers with a digest S1 (nginx-rtmp, SRS, Flash Media Server) gets a
/// signed C2; one that answers with a plain S1 (ffmpeg's listen mode) gets S1 echoed,
/// which is what it checks. C2 goes out as soon as S1 is in, without waiting for S2,
/// so a server that holds S2 back until C2 arrives cannot deadlock the exchange.
public struct RTMPHandshakeClient {
    private enum State { case idle, awaitingS0S1, awaitingS2, done }

    public let style: RTMPHandshake.Style
    private let epoch: UInt32
    private let random: (Int) -> [UInt8]
    private var state = State.idle
    private var buffer: [UInt8] = []
    private var c1: [UInt8] = []
    private var c1DigestOffset: Int?

    /// True when the server's S1 carried a valid digest.
    public private(set) var serverUsedDigest = false
    /// For a digest S1: whether S2 ended in the expected signature (ffmpeg refuses a
    /// mismatch when playing; LiveLine records it and goes on, since servers that sign
    /// S1 but echo C1 in S2 exist). Nil when not applicable.
    public private(set) var serverSignatureValid: Bool?

    /// - Parameters:
    ///   - style: offer a digest C1 (`.digest`) or a plain one.
    ///   - epoch: the time field of C1 (ffmpeg sends 0).
    ///   - random: returns `n` random bytes; tests inject a deterministic source.
    public init(style: RTMPHandshake.Style = .digest, epoch: UInt32 = 0,
                random: @escaping (Int) -> [UInt8] = RTMPHandshake.randomBytes)
    {
        self.style = style
        self.epoch = epoch
        self.random = random
    }

    /// True once S2 has been received.
    public var isDone: Bool { state == .done }

    /// C0 and C1, to send on connect.
    public mutating func start() -> [UInt8] {
        switch style {
        case .simple:
            c1 = RTMPHandshake.packet(time: epoch, version: [0, 0, 0, 0], random: random)
        case .digest:
            c1 = RTMPHandshake.packet(time: epoch, version: RTMPHandshake.clientVersion, random: random)
            c1DigestOffset = RTMPHandshake.imprintDigest(
                into: &c1, schema: .digestFirst, key: RTMPHandshake.playerPartialKey)
        }
        state = .awaitingS0S1
        return [RTMPHandshake.version] + c1
    }

    /// Takes bytes from the server; returns C2 once S0+S1 are in and `done` once S2 is.
    public mutating func feed(_ bytes: [UInt8]) throws -> RTMPHandshake.Step {
        guard state != .idle else { throw RTMPHandshake.Error.outOfOrder("client fed before start()") }
        guard state != .done else { throw RTMPHandshake.Error.outOfOrder("client fed after the handshake completed") }
        buffer += bytes
        var step = RTMPHandshake.Step()
        if state == .awaitingS0S1 {
            guard let s1 = try RTMPHandshake.takeVersionAndPacket(from: &buffer) else { return step }
            step.output = c2(answering: s1)
            state = .awaitingS2
        }
        if state == .awaitingS2, let s2 = RTMPHandshake.takeLastPacket(from: &buffer, completing: &step) {
            if serverUsedDigest, let offset = c1DigestOffset {
                let expected = RTMPHandshake.signature(
                    of: s2, peerDigest: c1[offset..<offset + HMACSHA256.size], fullKey: RTMPHandshake.serverKey)
                serverSignatureValid = expected[...] == s2[(RTMPHandshake.packetSize - HMACSHA256.size)...]
            }
            state = .done
        }
        return step
    }

    private mutating func c2(answering s1: [UInt8]) -> [UInt8] {
        // A zero version in S1 means a plain server; ffmpeg likewise only looks for a
        // digest when the version's first byte is at least 3.
        guard style == .digest, s1[4] != 0,
              let found = RTMPHandshake.findDigest(in: s1, key: RTMPHandshake.serverPartialKey, order: [.keyFirst, .digestFirst])
        else { return s1 }
        serverUsedDigest = true
        var c2 = RTMPHandshake.packet(time: 0, version: [], random: random)
        let signature = RTMPHandshake.signature(
            of: c2, peerDigest: s1[found.offset..<found.offset + HMACSHA256.size], fullKey: RTMPHandshake.playerKey)
        c2.replaceSubrange((c2.count - HMACSHA256.size)..., with: signature)
        return c2
    }
}
