/// Writes AMF0 values (AMF 0 File Format Specification §2).
public enum AMF0Encoder {
    /// The bytes of `values`, one after another (the layout of a command message).
    public static func encode(_ values: [AMF0Value]) -> [UInt8] {
        var out: [UInt8] = []
        for value in values { append(value, to: &out) }
        return out
    }

    /// Appends the encoding of `value` to `out`.
    public static func append(_ value: AMF0Value, to out: inout [UInt8]) {
        typealias Marker = AMF0Value.Marker
        switch value {
        case .number(let n):
            out.append(Marker.number.rawValue)
            appendDouble(n, to: &out)
        case .boolean(let b):
            out += [Marker.boolean.rawValue, b ? 1 : 0]
        case .string(let s):
            let utf8 = Array(s.utf8)
            if utf8.count > Int(UInt16.max) {
                // §2.14: strings over 65535 bytes must use the long-string type.
                out.append(Marker.longString.rawValue)
                appendUInt32(UInt32(truncatingIfNeeded: utf8.count), to: &out)
            } else {
                out.append(Marker.string.rawValue)
                appendUInt16(UInt16(utf8.count), to: &out)
            }
            out += utf8
        case .object(let object):
            out.append(Marker.object.rawValue)
            appendProperties(object, to: &out)
        case .null:
            out.append(Marker.null.rawValue)
        case .undefined:
            out.append(Marker.undefined.rawValue)
        case .reference(let index):
            out.append(Marker.reference.rawValue)
            appendUInt16(index, to: &out)
        case .ecmaArray(let object):
            out.append(Marker.ecmaArray.rawValue)
            appendUInt32(UInt32(truncatingIfNeeded: object.count), to: &out)
            appendProperties(object, to: &out)
        case .strictArray(let values):
            out.append(Marker.strictArray.rawValue)
            appendUInt32(UInt32(truncatingIfNeeded: values.count), to: &out)
            for element in values { append(element, to: &out) }
        case .date(let ms, let zone):
            out.append(Marker.date.rawValue)
            appendDouble(ms, to: &out)
            appendUInt16(UInt16(bitPattern: zone), to: &out)
        case .longString(let s):
            out.append(Marker.longString.rawValue)
            appendLongUTF8(s, to: &out)
        case .unsupported:
            out.append(Marker.unsupported.rawValue)
        case .xmlDocument(let s):
            out.append(Marker.xmlDocument.rawValue)
            appendLongUTF8(s, to: &out)
        case .typedObject(let className, let object):
            out.append(Marker.typedObject.rawValue)
            appendShortUTF8(className, to: &out)
            appendProperties(object, to: &out)
        }
    }

    /// Properties, then the empty name and object-end marker (§2.5, §2.11).
    private static func appendProperties(_ object: AMF0Object, to out: inout [UInt8]) {
        for property in object.properties {
            appendShortUTF8(property.name, to: &out)
            append(property.value, to: &out)
        }
        out += [0, 0, AMF0Value.Marker.objectEnd.rawValue]
    }

    /// UTF-8-empty / UTF-8 (§1.3): a 16-bit length; longer names are cut at 65535 bytes
    /// because the format cannot express them.
    private static func appendShortUTF8(_ s: String, to out: inout [UInt8]) {
        let utf8 = s.utf8.prefix(Int(UInt16.max))
        appendUInt16(UInt16(utf8.count), to: &out)
        out += utf8
    }

    private static func appendLongUTF8(_ s: String, to out: inout [UInt8]) {
        let utf8 = Array(s.utf8)
        appendUInt32(UInt32(truncatingIfNeeded: utf8.count), to: &out)
        out += utf8
    }

    private static func appendUInt16(_ v: UInt16, to out: inout [UInt8]) {
        out += [UInt8(v >> 8), UInt8(v & 0xFF)]
    }

    private static func appendUInt32(_ v: UInt32, to out: inout [UInt8]) {
        out += [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }

    private static func appendDouble(_ d: Double, to out: inout [UInt8]) {
        let bits = d.bitPattern
        for k in stride(from: 56, through: 0, by: -8) { out.append(UInt8((bits >> UInt64(k)) & 0xFF)) }
    }
}
