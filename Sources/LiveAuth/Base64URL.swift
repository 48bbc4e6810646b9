import Foundation

/// Unpadded base64url (RFC 4648 §5), the alphabet JWTs are written in (RFC 7515 §2).
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.last == "=" { text.removeLast() }
        return text
    }

    /// The bytes of unpadded base64url `text`; nil on any character outside the alphabet,
    /// padding, an impossible length, or unused trailing bits that are not zero (so each
    /// byte string has exactly one spelling and a token cannot be altered unnoticed).
    static func decode<S: StringProtocol>(_ text: S) -> [UInt8]? {
        guard let bytes = decodeLeniently(text), encode(bytes) == text else { return nil }
        return bytes
    }

    private static func decodeLeniently<S: StringProtocol>(_ text: S) -> [UInt8]? {
        guard text.utf8.count % 4 != 1 else { return nil }
        var standard = ""
        standard.reserveCapacity(text.utf8.count + 3)
        for character in text.unicodeScalars {
            switch character {
            case "A"..."Z", "a"..."z", "0"..."9": standard.unicodeScalars.append(character)
            case "-": standard += "+"
            case "_": standard += "/"
            default: return nil
            }
        }
        while standard.utf8.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map { [UInt8]($0) }
    }
}
