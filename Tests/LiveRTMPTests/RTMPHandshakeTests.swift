import LiveCore
import Testing
@testable import LiveRTMP

@Suite("RTMP handshake, simple and digest, in memory")
struct RTMPHandshakeTests {
    /// Runs client and server against each other, the server's bytes fed to the client
    /// `pieceSize` at a time; returns both sides' final state.
    func run(style: RTMPHandshake.Style, pieceSize: Int = .max, trailing: [UInt8] = [])
        throws -> (RTMPHandshakeClient, RTMPHandshakeServer, clientLeftover: [UInt8], serverLeftover: [UInt8])
    {
        let clientBytes = SeededBytes(seed: 1), serverBytes = SeededBytes(seed: 2)
        var client = RTMPHandshakeClient(style: style, epoch: 0, random: clientBytes.next)
        var server = RTMPHandshakeServer(epoch: 77, random: serverBytes.next)
        let c0c1 = client.start()
        #expect(c0c1.count == 1537)
        let answer = try server.feed(c0c1)
        #expect(answer.output.count == 1 + 2 * 1536)
        #expect(!answer.done)
        var c2: [UInt8] = []
        var clientDone = RTMPHandshake.Step()
        var offset = 0
        let s = answer.output + trailing
        // Bytes after the step that completes the handshake belong to the chunk stream.
        while offset < s.count && !client.isDone {
            let end = min(s.count, offset + min(pieceSize, s.count))
            let step = try client.feed(Array(s[offset..<end]))
            c2 += step.output
            if step.done { clientDone = step }
            offset = end
        }
        clientDone.leftover += s[offset...]
        #expect(c2.count == 1536)
        let serverDone = try server.feed(c2 + [0x03, 0x04])
        #expect(serverDone.done)
        #expect(serverDone.output.isEmpty)
        return (client, server, clientDone.leftover, serverDone.leftover)
    }

    @Test("simple handshake: S2 echoes C1, C2 echoes S1")
    func simple() throws {
        let (client, server, clientLeftover, serverLeftover) = try run(style: .simple, trailing: [0x02, 0x00])
        #expect(client.isDone && server.isDone)
        #expect(!server.clientUsedDigest)
        #expect(!client.serverUsedDigest)
        #expect(clientLeftover == [0x02, 0x00])
        #expect(serverLeftover == [0x03, 0x04])
    }

    @Test("digest handshake: both sides find the other's digest and S2's signature checks", arguments: [1, 7, 1536, Int.max])
    func digest(pieceSize: Int) throws {
        let (client, server, clientLeftover, _) = try run(style: .digest, pieceSize: pieceSize, trailing: [9])
        #expect(server.clientUsedDigest)
        #expect(server.clientSchema == .digestFirst)
        #expect(client.serverUsedDigest)
        #expect(client.serverSignatureValid == true)
        #expect(clientLeftover == [9])
    }

    @Test("the server validates a C1 built as ffmpeg builds it, and answers what ffmpeg checks")
    func ffmpegStyleC1() throws {
        // ffmpeg's rtmp_handshake: uptime 0, version 9.0.124.2, random, digest at
        // (c1[8]+…+c1[11]) % 728 + 12 keyed with the 30-byte player key.
        var c1 = [0, 0, 0, 0, 9, 0, 124, 2] + SeededBytes(seed: 9).next(1528)
        let sum = Int(c1[8]) + Int(c1[9]) + Int(c1[10]) + Int(c1[11])
        let position = sum % 728 + 12
        let key = Array("Genuine Adobe Flash Player 001".utf8)
        let digest = HMACSHA256.mac(key: key, c1[0..<position], c1[(position + 32)...])
        c1.replaceSubrange(position..<position + 32, with: digest)

        var server = RTMPHandshakeServer(random: SeededBytes(seed: 3).next)
        let answer = try server.feed([3] + c1)
        #expect(server.clientUsedDigest)
        let s1 = Array(answer.output[1...1536]), s2 = Array(answer.output[1537...])
        #expect(answer.output[0] == 3)
        #expect(s1[4] >= 3)  // ffmpeg checks the server digest only when this is ≥ 3
        // ffmpeg: rtmp_validate_digest(serverdata + 1, 772), then offset 8, with the 36-byte server key.
        let serverKey = Array("Genuine Adobe Flash Media Server 001".utf8)
        let found = [772, 8].contains { base in
            let p = (Int(s1[base]) + Int(s1[base + 1]) + Int(s1[base + 2]) + Int(s1[base + 3])) % 728 + base + 4
            return HMACSHA256.mac(key: serverKey, s1[0..<p], s1[(p + 32)...])[...] == s1[p..<p + 32]
        }
        #expect(found)
        // ffmpeg: signature = HMAC(S2[0..<1504], HMAC(client digest, full server key)).
        let fullServerKey = serverKey + RTMPHandshake.serverKey.suffix(32)
        let signatureKey = HMACSHA256.mac(key: fullServerKey, c1[position..<position + 32])
        #expect(HMACSHA256.mac(key: signatureKey, s2[0..<1504])[...] == s2[1504...])
    }

    @Test("a C1 with a version but no valid digest gets the simple answer")
    func forgedDigest() throws {
        let c1 = [0, 0, 0, 0, 9, 0, 124, 2] + SeededBytes(seed: 4).next(1528)
        var server = RTMPHandshakeServer(random: SeededBytes(seed: 5).next)
        let answer = try server.feed([3] + c1)
        #expect(!server.clientUsedDigest)
        #expect(Array(answer.output[1537...]) == c1)
    }

    @Test("a digest client facing a plain server (ffmpeg -listen) echoes S1 as C2")
    func digestClientPlainServer() throws {
        var client = RTMPHandshakeClient(style: .digest, random: SeededBytes(seed: 6).next)
        _ = client.start()
        let s1 = [0, 0, 0, 5, 0, 0, 0, 0] + SeededBytes(seed: 7).next(1528)
        let step = try client.feed([3] + s1)
        #expect(step.output == s1)
        #expect(!client.serverUsedDigest)
    }

    @Test("version bytes other than 3 are refused; feeding out of order is an error")
    func errors() throws {
        var server = RTMPHandshakeServer()
        #expect(throws: RTMPHandshake.Error.unsupportedVersion(6)) { try server.feed([6]) }
        var client = RTMPHandshakeClient()
        #expect(throws: RTMPHandshake.Error.self) { try client.feed([3]) }
        _ = client.start()
        #expect(throws: RTMPHandshake.Error.unsupportedVersion(0x16)) { try client.feed([0x16, 0x03]) }
    }

    @Test("HMAC-SHA256 matches RFC 4231 test case 2")
    func hmac() {
        let mac = HMACSHA256.mac(key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8))
        let hex = mac.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        #expect(hex == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test("the default random fill has the asked length, spreads over all byte values and differs per call")
    func defaultRandomFill() {
        for count in [0, 1, 7, 8, 9, 1528] { #expect(RTMPHandshake.randomBytes(count).count == count) }
        let first = RTMPHandshake.randomBytes(1528), second = RTMPHandshake.randomBytes(1528)
        #expect(first != second)
        // 1528 uniform bytes cover about 251 of the 256 values; a broken mixer (a
        // repeated word, a zero high half) covers far fewer.
        #expect(Set(first).count > 200)
        #expect(Set(stride(from: 0, to: 1528, by: 8).map { first[$0] }).count > 100)
    }
}
