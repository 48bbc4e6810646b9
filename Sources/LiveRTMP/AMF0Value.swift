/// One value of Action Message Format version 0 (Adobe, "AMF 0 File Format Specification",
/// 2007), the encoding of RTMP command (type 20) and data (type 18) messages.
///
/// Section numbers in the cases refer to that specification. Object-end (§2.11) is not a
/// value of its own: it terminates objects, ECMA arrays and typed objects and is
/// written and consumed by `AMF0Encoder` / `AMF0Decoder`.
public enum AMF0Value: Equatable, Sendable {
    /// §2.2 number-type: an IEEE 754 double, big-endian.
    case number(Double)
    /// §2.3 boolean-type.
    case boolean(Bool)
    /// §2.4 string-type: UTF-8 with a 16-bit length. Encoded as a long string when
    /// longer than 65535 bytes, as §2.14 requires.
    case string(String)
    /// §2.5 anonymous object: ordered properties terminated by an object-end.
    case object(AMF0Object)
    /// §2.7 null-type.
    case null
    /// §2.8 undefined-type.
    case undefined
    /// §2.9 reference-type: the 16-bit index of an earlier complex value. Kept as is;
    /// RTMP peers do not send references in commands.
    case reference(UInt16)
    /// §2.10 ECMA array: properties like an object, preceded by a 32-bit count. The
    /// count is only a hint (encoders write 0 or the real count); decoding reads up to
    /// the object-end, as ffmpeg does.
    case ecmaArray(AMF0Object)
    /// §2.12 strict array: a 32-bit count and that many values.
    case strictArray([AMF0Value])
    /// §2.13 date-type: milliseconds since 1970-01-01 UTC and a time-zone offset in
    /// minutes (the spec says it should be 0 and is not used).
    case date(millisecondsSince1970: Double, timeZoneMinutes: Int16)
    /// §2.14 long-string-type: UTF-8 with a 32-bit length.
    case longString(String)
    /// §2.15 unsupported-type.
    case unsupported
    /// §2.17 XML document: a long string holding XML.
    case xmlDocument(String)
    /// §2.18 typed object: a class name and properties.
    case typedObject(className: String, AMF0Object)

    /// The type markers of §2.1.
    public enum Marker: UInt8, Sendable {
        case number = 0x00, boolean = 0x01, string = 0x02, object = 0x03, movieClip = 0x04
        case null = 0x05, undefined = 0x06, reference = 0x07, ecmaArray = 0x08, objectEnd = 0x09
        case strictArray = 0x0A, date = 0x0B, longString = 0x0C, unsupported = 0x0D
        case recordSet = 0x0E, xmlDocument = 0x0F, typedObject = 0x10, avmPlusObject = 0x11
    }

    /// The number, if this is one.
    public var numberValue: Double? {
        if case .number(let n) = self { return n }
        return nil
    }

    /// The text of a string, long string or XML document.
    public var stringValue: String? {
        switch self {
        case .string(let s), .longString(let s), .xmlDocument(let s): return s
        default: return nil
        }
    }

    /// The boolean, if this is one.
    public var booleanValue: Bool? {
        if case .boolean(let b) = self { return b }
        return nil
    }

    /// The properties of an object, ECMA array or typed object.
    public var objectValue: AMF0Object? {
        switch self {
        case .object(let o), .ecmaArray(let o), .typedObject(_, let o): return o
        default: return nil
        }
    }

    /// Property `key` of an object-like value (nil for other values or a missing key).
    public subscript(key: String) -> AMF0Value? { objectValue?[key] }
}

extension AMF0Value: ExpressibleByStringLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(nilLiteral: ()) { self = .null }
}
