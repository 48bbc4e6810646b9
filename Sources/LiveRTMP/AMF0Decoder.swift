/// Reads AMF0 values (AMF 0 File Format Specification §2) from a complete buffer, such
/// as the payload of an RTMP command or data message.
///
/// An RTMP message arrives whole, so a value that runs past the end of the buffer is
/// malformed (`Error.truncated`), not "need more data". Nesting is limited to
/// `maxDepth` levels, so hostile input cannot exhaust the stack; the values of one
/// decoder (nested ones and object properties included) are limited to `maxValues`,
/// so a small buffer of one-byte nulls cannot become a large tree of enum values; and
/// every length is checked against the bytes that remain before anything is allocated.
public struct AMF0Decoder {
    /// Why a buffer is not valid AMF0.
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        /// The value at `offset` needs more bytes than the buffer holds.
        case truncated(offset: Int)
        /// A marker this decoder does not know or that AMF0 reserves (movie clip, record
        /// set, the AMF3 switch).
        case unsupportedMarker(UInt8, offset: Int)
        /// An object-end marker where a value was expected.
        case unexpectedObjectEnd(offset: Int)
        /// Objects or arrays nested deeper than the limit.
        case nestingTooDeep(limit: Int)
        /// A strict array whose count cannot fit the remaining bytes.
        case arrayTooLong(count: UInt32, offset: Int)
        /// More values than the decoder's budget.
        case tooManyValues(limit: Int)

        public var description: String {
            switch self {
            case .truncated(let offset): "AMF0: value at byte \(offset) runs past the end of the buffer"
            case .unsupportedMarker(let marker, let offset):
                "AMF0: unsupported type marker 0x\(String(marker, radix: 16)) at byte \(offset)"
            case .unexpectedObjectEnd(let offset): "AMF0: object-end marker outside an object at byte \(offset)"
            case .nestingTooDeep(let limit): "AMF0: values nested deeper than \(limit) levels"
            case .arrayTooLong(let count, let offset): "AMF0: strict array of \(count) values at byte \(offset) exceeds the buffer"
            case .tooManyValues(let limit): "AMF0: more than \(limit) values"
            }
        }
    }

    /// The deepest nesting of objects and arrays accepted.
    public static let defaultMaxDepth = 64
    /// The most values one decoder reads (a connect command holds about 20, ffmpeg's
    /// onMetaData about 15).
    public static let defaultMaxValues = 4096

    public let bytes: [UInt8]
    /// The offset of the next unread byte.
    public private(set) var offset: Int
    public let maxDepth: Int
    public let maxValues: Int
    /// Values read so far, nested ones included.
    public private(set) var valueCount = 0

    public init(_ bytes: [UInt8], offset: Int = 0, maxDepth: Int = AMF0Decoder.defaultMaxDepth,
                maxValues: Int = AMF0Decoder.defaultMaxValues)
    {
        self.bytes = bytes
        self.offset = offset
        self.maxDepth = maxDepth
        self.maxValues = maxValues
    }

    /// True when every byte has been read.
    public var isAtEnd: Bool { offset >= bytes.count }

    /// Decodes the next value.
    public mutating func decode() throws -> AMF0Value {
        try value(depth: 0)
    }

    /// Decodes values until the end of the buffer.
    public mutating func decodeAll() throws -> [AMF0Value] {
        var values: [AMF0Value] = []
        while !isAtEnd { values.append(try decode()) }
        return values
    }

    /// All the values of `bytes`.
    public static func decodeAll(_ bytes: [UInt8]) throws -> [AMF0Value] {
        var decoder = AMF0Decoder(bytes)
        return try decoder.decodeAll()
    }

    // MARK: - Values

    private mutating func value(depth: Int) throws -> AMF0Value {
        guard valueCount < maxValues else { throw Error.tooManyValues(limit: maxValues) }
        valueCount += 1
        let start = offset
        let markerByte = try byte()
        guard let marker = AMF0Value.Marker(rawValue: markerByte) else {
            throw Error.unsupportedMarker(markerByte, offset: start)
        }
        switch marker {
        case .number:
            return .number(try double())
        case .boolean:
            return .boolean(try byte() != 0)
        case .string:
            return .string(try string(length: Int(try uint16())))
        case .object:
            return .object(try properties(depth: depth + 1))
        case .null:
            return .null
        case .undefined:
            return .undefined
        case .reference:
            return .reference(try uint16())
        case .ecmaArray:
            _ = try uint32()  // the count is a hint only (§2.10); the object-end ends the array
            return .ecmaArray(try properties(depth: depth + 1))
        case .objectEnd:
            throw Error.unexpectedObjectEnd(offset: start)
        case .strictArray:
            let countOffset = offset
            let count = try uint32()
            // Each value takes at least its marker byte.
            guard Int(count) <= bytes.count - offset else { throw Error.arrayTooLong(count: count, offset: countOffset) }
            guard depth + 1 <= maxDepth else { throw Error.nestingTooDeep(limit: maxDepth) }
            var values: [AMF0Value] = []
            // The count is the peer's claim: reserve little and let real values grow the
            // array, so a nested array claiming millions of elements costs nothing.
            values.reserveCapacity(min(Int(count), 64))
            for _ in 0..<count { values.append(try value(depth: depth + 1)) }
            return .strictArray(values)
        case .date:
            let ms = try double()
            let zone = Int16(bitPattern: try uint16())
            return .date(millisecondsSince1970: ms, timeZoneMinutes: zone)
        case .longString:
            return .longString(try string(length: Int(try uint32())))
        case .unsupported:
            return .unsupported
        case .xmlDocument:
            return .xmlDocument(try string(length: Int(try uint32())))
        case .typedObject:
            let name = try string(length: Int(try uint16()))
            return .typedObject(className: name, try properties(depth: depth + 1))
        case .movieClip, .recordSet, .avmPlusObject:
            throw Error.unsupportedMarker(markerByte, offset: start)
        }
    }

    /// Properties up to and including the empty name + object-end that closes them (§2.5).
    private mutating func properties(depth: Int) throws -> AMF0Object {
        guard depth <= maxDepth else { throw Error.nestingTooDeep(limit: maxDepth) }
        var object = AMF0Object()
        while true {
            let nameLength = Int(try uint16())
            if nameLength == 0 {
                let end = offset
                let marker = try byte()
                if marker == AMF0Value.Marker.objectEnd.rawValue { return object }
                // An empty property name with a real value: legal, if odd.
                offset = end
                object.properties.append(.init("", try value(depth: depth)))
                continue
            }
            let name = try string(length: nameLength)
            object.properties.append(.init(name, try value(depth: depth)))
        }
    }

    // MARK: - Primitives (big-endian, §1.3)

    private mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw Error.truncated(offset: offset) }
        defer { offset += 1 }
        return bytes[offset]
    }

    private mutating func uint16() throws -> UInt16 {
        guard bytes.count - offset >= 2 else { throw Error.truncated(offset: offset) }
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    private mutating func uint32() throws -> UInt32 {
        guard bytes.count - offset >= 4 else { throw Error.truncated(offset: offset) }
        defer { offset += 4 }
        return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
            | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    private mutating func double() throws -> Double {
        guard bytes.count - offset >= 8 else { throw Error.truncated(offset: offset) }
        var bits: UInt64 = 0
        for k in 0..<8 { bits = bits << 8 | UInt64(bytes[offset + k]) }
        offset += 8
        return Double(bitPattern: bits)
    }

    private mutating func string(length: Int) throws -> String {
        guard length <= bytes.count - offset else { throw Error.truncated(offset: offset) }
        defer { offset += length }
        return String(decoding: bytes[offset..<offset + length], as: UTF8.self)
    }
}
