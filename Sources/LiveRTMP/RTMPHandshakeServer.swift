import LiveCore

/// The server side of the RTMP handshake (RTMP 1.0 §5.2.5) as a pure state machine:
/// `feed(_:)` takes C0+C1 and answers S0+S1+S2, then takes C2 and reports `done`.
///
/// A C1 with a valid Flash Player 9 digest (ffmpeg always sends one) gets a digest S1
/// in the same schema and an S2 signed with the client's digest, which ffmpeg checks
/// when it plays; any other C1 gets the simple handshake (S2 echoes C1). C2 is not
/// checked, as nginx-rtmp and SRS do not: ffmpeg's publishing client echoes S1 even
/// after a digest S1.
public struct RTMPHandshakeServer {
    private enum State { case awaitingC0C1, awaitingC2, done }

    private let epoch: UInt32
    private let random: (Int) -> [UInt8]
    private var state = State.awaitingC0C1
    private var buffer: [UInt8] = []

    /// True when C1 carried a valid digest, so S1/S2 were the digest form.
    public private(set) var clientUsedDigest = false
    /// The digest schema found in C1, if any.
    public private(set) var clientSchema: RTMPHandshake.Schema?

    /// - Parameters:
    ///   - epoch: the time field of S1.
    ///   - random: returns `n` random bytes; tests inject a deterministic source.
    public init(epoch: UInt32 = 0, random: @escaping (Int) -> [UInt8] = RTMPHandshake.randomBytes) {
        self.epoch = epoch
        self.random = random
    }

    /// True once C2 has been received.
    public var isDone: Bool { state == .done }

    /// Takes bytes from the client; returns S0+S1+S2 once C0+C1 are in and `done` once
    /// C2 is, with any bytes after C2 in `leftover`.
    public mutating func feed(_ bytes: [UInt8]) throws -> RTMPHandshake.Step {
        guard state != .done else { throw RTMPHandshake.Error.outOfOrder("server fed after the handshake completed") }
        buffer += bytes
        var step = RTMPHandshake.Step()
        if state == .awaitingC0C1 {
            guard let c1 = try RTMPHandshake.takeVersionAndPacket(from: &buffer) else { return step }
            step.output = answer(c1)
            state = .awaitingC2
        }
        // C2 is not checked (see above): taking it off the buffer is all.
        if state == .awaitingC2, RTMPHandshake.takeLastPacket(from: &buffer, completing: &step) != nil {
            state = .done
        }
        return step
    }

    /// S0, S1 and S2 for `c1`.
    private mutating func answer(_ c1: [UInt8]) -> [UInt8] {
        let size = RTMPHandshake.packetSize
        let found = c1[4..<8].allSatisfy({ $0 == 0 })
            ? nil : RTMPHandshake.findDigest(in: c1, key: RTMPHandshake.playerPartialKey)
        guard let found else {
            let s1 = RTMPHandshake.packet(time: epoch, version: [0, 0, 0, 0], random: random)
            return [RTMPHandshake.version] + s1 + c1
        }
        clientUsedDigest = true
        clientSchema = found.schema
        var s1 = RTMPHandshake.packet(time: epoch, version: RTMPHandshake.serverVersion, random: random)
        RTMPHandshake.imprintDigest(into: &s1, schema: found.schema, key: RTMPHandshake.serverPartialKey)
        var s2 = RTMPHandshake.packet(time: 0, version: [], random: random)
        let signature = RTMPHandshake.signature(
            of: s2, peerDigest: c1[found.offset..<found.offset + HMACSHA256.size], fullKey: RTMPHandshake.serverKey)
        s2.replaceSubrange((size - HMACSHA256.size)..., with: signature)
        return [RTMPHandshake.version] + s1 + s2
    }
}
