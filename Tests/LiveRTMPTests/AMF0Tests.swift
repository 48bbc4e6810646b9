import Testing
@testable import LiveRTMP

@Suite("AMF0 byte fixtures (AMF 0 File Format Specification §2)")
struct AMF0Tests {
    /// Each value with its encoding written out by hand from the spec.
    static let fixtures: [(AMF0Value, [UInt8])] = [
        (.number(1.5), [0x00, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0]),  // §2.2
        (.number(-2), [0x00, 0xC0, 0x00, 0, 0, 0, 0, 0, 0]),
        (.boolean(true), [0x01, 0x01]),  // §2.3
        (.boolean(false), [0x01, 0x00]),
        (.string("app"), [0x02, 0x00, 0x03, 0x61, 0x70, 0x70]),  // §2.4
        (.string(""), [0x02, 0x00, 0x00]),
        (.string("é"), [0x02, 0x00, 0x02, 0xC3, 0xA9]),
        (.object(["a": .number(1), "b": .null]),  // §2.5 with §2.11 object-end
         [0x03, 0x00, 0x01, 0x61, 0x00, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0, 0x00, 0x01, 0x62, 0x05, 0x00, 0x00, 0x09]),
        (.object([:]), [0x03, 0x00, 0x00, 0x09]),
        (.null, [0x05]),  // §2.7
        (.undefined, [0x06]),  // §2.8
        (.reference(0x0102), [0x07, 0x01, 0x02]),  // §2.9
        (.ecmaArray(["w": .boolean(true)]),  // §2.10
         [0x08, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x77, 0x01, 0x01, 0x00, 0x00, 0x09]),
        (.strictArray([.number(0), .string("x")]),  // §2.12
         [0x0A, 0x00, 0x00, 0x00, 0x02, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x00, 0x01, 0x78]),
        (.date(millisecondsSince1970: 1.0, timeZoneMinutes: -60),  // §2.13
         [0x0B, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0, 0xFF, 0xC4]),
        (.longString("ab"), [0x0C, 0x00, 0x00, 0x00, 0x02, 0x61, 0x62]),  // §2.14
        (.unsupported, [0x0D]),  // §2.15
        (.xmlDocument("<a/>"), [0x0F, 0x00, 0x00, 0x00, 0x04, 0x3C, 0x61, 0x2F, 0x3E]),  // §2.17
        (.typedObject(className: "C", ["k": .string("v")]),  // §2.18
         [0x10, 0x00, 0x01, 0x43, 0x00, 0x01, 0x6B, 0x02, 0x00, 0x01, 0x76, 0x00, 0x00, 0x09]),
    ]

    @Test("every type encodes to its hand-written bytes", arguments: 0..<fixtures.count)
    func encodes(index: Int) {
        let (value, bytes) = Self.fixtures[index]
        #expect(AMF0Encoder.encode([value]) == bytes)
    }

    @Test("every type decodes from its hand-written bytes", arguments: 0..<fixtures.count)
    func decodes(index: Int) throws {
        let (value, bytes) = Self.fixtures[index]
        var decoder = AMF0Decoder(bytes)
        #expect(try decoder.decode() == value)
        #expect(decoder.isAtEnd)
    }

    @Test("a command's values decode in sequence: ffmpeg's createStream")
    func sequence() throws {
        // "createStream", 2.0, null as ffmpeg sends it.
        let bytes: [UInt8] = [0x02, 0x00, 0x0C] + Array("createStream".utf8) + [0x00, 0x40, 0, 0, 0, 0, 0, 0, 0, 0x05]
        #expect(try AMF0Decoder.decodeAll(bytes) == ["createStream", 2, nil])
    }

    @Test("nested values round-trip")
    func roundTrip() throws {
        let value: AMF0Value = .object([
            "list": .strictArray([.ecmaArray(["x": 1, "y": .object(["deep": true])]), .undefined, .longString("z")]),
            "when": .date(millisecondsSince1970: 1_700_000_000_000, timeZoneMinutes: 0),
            "": .string("empty name"),
        ])
        #expect(try AMF0Decoder.decodeAll(AMF0Encoder.encode([value, .null])) == [value, .null])
    }

    @Test("a string over 65535 bytes is written as a long string")
    func longStringPromotion() throws {
        let text = String(repeating: "a", count: 70_000)
        let bytes = AMF0Encoder.encode([.string(text)])
        #expect(bytes[0] == 0x0C)
        #expect(try AMF0Decoder.decodeAll(bytes) == [.longString(text)])
    }

    @Test("truncation anywhere in a value is an error, never a crash")
    func truncation() throws {
        for (value, bytes) in Self.fixtures where bytes.count > 1 {
            for cut in 1..<bytes.count {
                var decoder = AMF0Decoder(Array(bytes[..<cut]))
                #expect(throws: AMF0Decoder.Error.self, "\(value) cut at \(cut)") { try decoder.decode() }
            }
        }
    }

    @Test("malformed input gives the named error")
    func errors() throws {
        #expect(throws: AMF0Decoder.Error.unexpectedObjectEnd(offset: 0)) { try AMF0Decoder.decodeAll([0x09]) }
        #expect(throws: AMF0Decoder.Error.unsupportedMarker(0x11, offset: 0)) { try AMF0Decoder.decodeAll([0x11]) }
        #expect(throws: AMF0Decoder.Error.unsupportedMarker(0x42, offset: 0)) { try AMF0Decoder.decodeAll([0x42]) }
        #expect(throws: AMF0Decoder.Error.arrayTooLong(count: 0xFFFF_FFFF, offset: 1)) {
            try AMF0Decoder.decodeAll([0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x05])
        }
        #expect(throws: AMF0Decoder.Error.truncated(offset: 3)) { try AMF0Decoder.decodeAll([0x02, 0x00, 0x05, 0x61]) }
    }

    @Test("nesting is limited to 64 levels")
    func depth() throws {
        func nested(_ levels: Int) -> [UInt8] {
            var bytes: [UInt8] = []
            for _ in 0..<levels { bytes += [0x0A, 0, 0, 0, 1] }  // strict arrays of one element
            return bytes + [0x05]
        }
        #expect(try AMF0Decoder.decodeAll(nested(64)).count == 1)
        #expect(throws: AMF0Decoder.Error.nestingTooDeep(limit: 64)) { try AMF0Decoder.decodeAll(nested(65)) }
        // Objects count the same way.
        var objects: [UInt8] = []
        for _ in 0..<65 { objects += [0x03, 0x00, 0x01, 0x6B] }
        #expect(throws: AMF0Decoder.Error.nestingTooDeep(limit: 64)) { try AMF0Decoder.decodeAll(objects) }
    }

    @Test("ECMA array count is a hint: a wrong count still reads to the object end")
    func ecmaCountHint() throws {
        let bytes: [UInt8] = [0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x77, 0x05, 0x00, 0x00, 0x09]
        #expect(try AMF0Decoder.decodeAll(bytes) == [.ecmaArray(["w": nil])])
    }

    @Test("the value budget bounds a small buffer of one-byte values, nested ones included")
    func valueBudget() throws {
        // A strict array of 5000 nulls: 5005 bytes, within the buffer, past the budget.
        let nulls: [UInt8] = [0x0A] + be32(5000) + [UInt8](repeating: 0x05, count: 5000)
        #expect(throws: AMF0Decoder.Error.tooManyValues(limit: 4096)) { try AMF0Decoder.decodeAll(nulls) }
        // Values in objects and across top-level values count too.
        var object: [UInt8] = [0x03]
        for index in 0..<3000 { object += [0x00, 0x02, UInt8(index >> 8), UInt8(index & 0xFF), 0x05] }
        object += [0x00, 0x00, 0x09]
        #expect(throws: AMF0Decoder.Error.tooManyValues(limit: 4096)) { try AMF0Decoder.decodeAll(object + object) }
        #expect(try AMF0Decoder.decodeAll(object).count == 1)
        var limited = AMF0Decoder([0x05, 0x05, 0x05], maxValues: 2)
        #expect(throws: AMF0Decoder.Error.tooManyValues(limit: 2)) { try limited.decodeAll() }
    }
}
