import Testing
@testable import LiveNet

/// Frames from RFC 6455 §5.7 and the edge cases around them.
@Suite("WebSocket frames")
struct WebSocketFrameTests {
    static let hello = Array("Hello".utf8)
    static let unmaskedText: [UInt8] = [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]
    static let maskedText: [UInt8] = [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]
    static let fragments: [UInt8] = [0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f]
    static let unmaskedPing: [UInt8] = [0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]
    static let maskedPong: [UInt8] = [0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]
    static let key: [UInt8] = [0x37, 0xfa, 0x21, 0x3d]

    private func decodeAll(_ bytes: [UInt8], requireMask: Bool, maxPayload: Int = 1 << 20) throws -> [WebSocketFrame] {
        var decoder = WebSocketFrameDecoder(requireMask: requireMask, maxPayload: maxPayload)
        decoder.append(bytes)
        var frames: [WebSocketFrame] = []
        while let frame = try decoder.next() { frames.append(frame) }
        #expect(decoder.bufferedCount == 0)
        return frames
    }

    @Test("RFC 6455 §5.7 examples decode")
    func rfcExamples() throws {
        #expect(try decodeAll(Self.unmaskedText, requireMask: false) == [WebSocketFrame(opcode: .text, payload: Self.hello)])
        #expect(try decodeAll(Self.maskedText, requireMask: true) == [WebSocketFrame(opcode: .text, payload: Self.hello)])
        #expect(try decodeAll(Self.fragments, requireMask: false) == [
            WebSocketFrame(fin: false, opcode: .text, payload: Array("Hel".utf8)),
            WebSocketFrame(opcode: .continuation, payload: Array("lo".utf8)),
        ])
        #expect(try decodeAll(Self.unmaskedPing, requireMask: false) == [WebSocketFrame(opcode: .ping, payload: Self.hello)])
        #expect(try decodeAll(Self.maskedPong, requireMask: true) == [WebSocketFrame(opcode: .pong, payload: Self.hello)])
    }

    @Test("RFC 6455 §5.7 examples encode byte for byte, including the 16- and 64-bit lengths")
    func rfcEncoding() {
        #expect(WebSocketFrame(opcode: .text, payload: Self.hello).encoded() == Self.unmaskedText)
        #expect(WebSocketFrame(opcode: .text, payload: Self.hello).encoded(maskingKey: Self.key) == Self.maskedText)
        #expect(WebSocketFrame(opcode: .pong, payload: Self.hello).encoded(maskingKey: Self.key) == Self.maskedPong)
        let medium = WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: 7, count: 256)).encoded()
        #expect(Array(medium.prefix(4)) == [0x82, 0x7E, 0x01, 0x00])
        #expect(medium.count == 4 + 256)
        let large = WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: 7, count: 65536)).encoded()
        #expect(Array(large.prefix(10)) == [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0])
        #expect(large.count == 10 + 65536)
    }

    @Test("round trip through every length encoding, masked and not", arguments: [0, 1, 125, 126, 127, 65535, 65536, 70000])
    func roundTrip(length: Int) throws {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 31) }
        let frame = WebSocketFrame(opcode: .binary, payload: payload)
        #expect(try decodeAll(frame.encoded(), requireMask: false) == [frame])
        #expect(try decodeAll(frame.encoded(maskingKey: [1, 2, 3, 4]), requireMask: true) == [frame])
    }

    @Test("a stream of frames split at every offset decodes to the same frames")
    func splitAtEveryOffset() throws {
        let medium = WebSocketFrame(opcode: .binary, payload: (0..<300).map { UInt8(truncatingIfNeeded: $0) })
        let stream = Self.maskedText + Self.maskedPong + medium.encoded(maskingKey: [9, 8, 7, 6])
            + WebSocketFrame.close(code: 1000, reason: "bye").encoded(maskingKey: Self.key)
        let whole = try decodeAll(stream, requireMask: true)
        #expect(whole.count == 4)
        for split in 0...stream.count {
            var decoder = WebSocketFrameDecoder(requireMask: true)
            var frames: [WebSocketFrame] = []
            decoder.append(stream[..<split])
            while let frame = try decoder.next() { frames.append(frame) }
            decoder.append(stream[split...])
            while let frame = try decoder.next() { frames.append(frame) }
            #expect(frames == whole, "split at \(split)")
        }
        // One byte at a time, too.
        var decoder = WebSocketFrameDecoder(requireMask: true)
        var frames: [WebSocketFrame] = []
        for byte in stream {
            decoder.append([byte])
            while let frame = try decoder.next() { frames.append(frame) }
        }
        #expect(frames == whole)
    }

    @Test("an oversize frame is refused from its header alone, before its payload arrives")
    func oversize() {
        var decoder = WebSocketFrameDecoder(requireMask: false, maxPayload: 1000)
        decoder.append([0x82, 0x7E, 0x03, 0xE9]) // 1001 bytes announced
        #expect(throws: WebSocketError.tooBig(length: 1001, limit: 1000)) { try decoder.next() }
        var huge = WebSocketFrameDecoder(requireMask: false)
        huge.append([0x82, 0x7F, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: WebSocketError.self) { try huge.next() }
        #expect(WebSocketError.tooBig(length: 1001, limit: 1000).closeCode == 1009)
    }

    @Test("protocol violations are refused", arguments: [
        ([0x81, 0x05] + Array("Hello".utf8), true, "unmasked client frame"),
        (maskedText, false, "masked server frame"),
        ([0xC1, 0x00], false, "reserved bit"),
        ([0x83, 0x00], false, "reserved opcode"),
        ([0x09, 0x00], false, "fragmented ping"),
        ([0x88, 0x7E, 0x00, 0x7E] + [UInt8](repeating: 0, count: 126), false, "126-byte close"),
        ([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 1], false, "64-bit length with the top bit"),
    ] as [([UInt8], Bool, String)])
    func violations(bytes: [UInt8], requireMask: Bool, what: String) {
        var decoder = WebSocketFrameDecoder(requireMask: requireMask)
        decoder.append(bytes)
        #expect(throws: WebSocketError.self, "\(what)") { try decoder.next() }
    }

    @Test("fragments join into one message while a ping between them passes through")
    func fragmentation() throws {
        var assembler = WebSocketMessageAssembler()
        #expect(try assembler.push(WebSocketFrame(fin: false, opcode: .text, payload: Array("Hel".utf8))) == nil)
        #expect(try assembler.push(WebSocketFrame(opcode: .ping, payload: [1])) == .ping([1]))
        #expect(try assembler.push(WebSocketFrame(fin: false, opcode: .continuation, payload: Array("l".utf8))) == nil)
        #expect(try assembler.push(WebSocketFrame(opcode: .continuation, payload: Array("o".utf8))) == .text("Hello"))
        #expect(try assembler.push(WebSocketFrame(opcode: .binary, payload: [1, 2])) == .binary([1, 2]))
        #expect(try assembler.push(.close(code: 1001, reason: "away")) == .close(code: 1001, reason: "away"))
        #expect(try assembler.push(WebSocketFrame(opcode: .close)) == .close(code: nil, reason: ""))
    }

    @Test("fragmentation errors: continuation without a start, a new message inside one, a message over the limit, bad UTF-8")
    func fragmentationErrors() throws {
        var lone = WebSocketMessageAssembler()
        #expect(throws: WebSocketError.self) { try lone.push(WebSocketFrame(opcode: .continuation, payload: [1])) }
        var nested = WebSocketMessageAssembler()
        _ = try nested.push(WebSocketFrame(fin: false, opcode: .text, payload: [65]))
        #expect(throws: WebSocketError.self) { try nested.push(WebSocketFrame(opcode: .text, payload: [66])) }
        var small = WebSocketMessageAssembler(maxMessage: 10)
        _ = try small.push(WebSocketFrame(fin: false, opcode: .binary, payload: [UInt8](repeating: 0, count: 6)))
        #expect(throws: WebSocketError.tooBig(length: 12, limit: 10)) {
            try small.push(WebSocketFrame(opcode: .continuation, payload: [UInt8](repeating: 0, count: 6)))
        }
        var text = WebSocketMessageAssembler()
        #expect(throws: WebSocketError.invalidText) { try text.push(WebSocketFrame(opcode: .text, payload: [0xC3, 0x28])) }
    }

    @Test("a close frame with a code that may not be sent (1005, 1006, 999, 2000, 5000) is a protocol violation, not echoed")
    func reservedCloseCodes() throws {
        var assembler = WebSocketMessageAssembler()
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 2000, 2999, 5000, 65535] {
            #expect(throws: WebSocketError.protocolViolation("close code \(code) may not be sent")) {
                try assembler.push(.close(code: code))
            }
        }
        for code: UInt16 in [1000, 1003, 1007, 1014, 3000, 4999] {
            #expect(try assembler.push(.close(code: code)) == .close(code: code, reason: ""))
        }
    }
}
