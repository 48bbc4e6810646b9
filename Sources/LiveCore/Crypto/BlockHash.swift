/// A hash of 64-byte blocks that HMAC can key (RFC 2104): SHA-1 and SHA-256.
public protocol BlockHash: Sendable {
    /// The digest's length in bytes.
    static var digestSize: Int { get }
    /// A hash of the empty message so far.
    init()
    /// Appends `bytes` to the message.
    mutating func update<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8
    /// The digest of everything appended; the value is spent afterwards.
    mutating func finalize() -> [UInt8]
}

extension BlockHash {
    /// The digest of `bytes`.
    public static func digest<Bytes: Collection>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var hash = Self()
        hash.update(bytes)
        return hash.finalize()
    }
}
