/// HMAC (RFC 2104) over a 64-byte-block hash, pure Swift. Stateless, so any thread may
/// use it.
public enum HMAC<Hash: BlockHash> {
    /// The MAC's length in bytes: the hash's digest size.
    public static var size: Int { Hash.digestSize }

    /// The MAC of the concatenation of `parts` under `key`.
    public static func mac(key: [UInt8], _ parts: ArraySlice<UInt8>...) -> [UInt8] {
        mac(key: key, parts: parts)
    }

    /// One-shot MAC of `message` under `key`.
    public static func mac(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        mac(key: key, parts: [message[...]])
    }

    private static func mac(key: [UInt8], parts: [ArraySlice<UInt8>]) -> [UInt8] {
        let blockSize = HashBlockFraming.blockSize
        // A key longer than a block is hashed first; a shorter one is padded with zeros.
        var block = key.count > blockSize ? Hash.digest(key) : key
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        var inner = Hash()
        inner.update(block.map { $0 ^ 0x36 })
        for part in parts { inner.update(part) }
        var outer = Hash()
        outer.update(block.map { $0 ^ 0x5C })
        outer.update(inner.finalize())
        return outer.finalize()
    }
}

/// HMAC-SHA256: signs access tokens (LiveAuth) and the RTMP digest handshake (LiveRTMP).
public typealias HMACSHA256 = HMAC<SHA256>
