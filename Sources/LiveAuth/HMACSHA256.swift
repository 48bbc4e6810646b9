import CFFmpeg

/// HMAC-SHA256 (RFC 2104 over FIPS 180-4) through libavutil's `av_hmac_*`: the one
/// `AVHMAC` handle, freed in deinit. Signs access tokens here and the digest handshake in
/// LiveRTMP.
///
/// Not thread-safe: one instance is used by one thread at a time (the one-shot `mac` makes
/// its own).
public final class HMACSHA256 {
    /// The MAC's length in bytes.
    public static let size = 32
    private let context: OpaquePointer

    public init() {
        guard let context = av_hmac_alloc(AV_HMAC_SHA256) else {
            // av_hmac_alloc fails only when malloc does.
            fatalError("av_hmac_alloc(AV_HMAC_SHA256) returned NULL: out of memory")
        }
        self.context = context
    }

    deinit { av_hmac_free(context) }

    /// The MAC of the concatenation of `parts` under `key`.
    public func mac(key: [UInt8], _ parts: ArraySlice<UInt8>...) -> [UInt8] {
        key.withUnsafeBufferPointer { av_hmac_init(context, $0.baseAddress, UInt32($0.count)) }
        for part in parts where !part.isEmpty {
            part.withUnsafeBufferPointer { av_hmac_update(context, $0.baseAddress, UInt32($0.count)) }
        }
        var out = [UInt8](repeating: 0, count: Self.size)
        out.withUnsafeMutableBufferPointer { _ = av_hmac_final(context, $0.baseAddress, UInt32(Self.size)) }
        return out
    }

    /// One-shot MAC of `message` under `key`.
    public static func mac(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        HMACSHA256().mac(key: key, message[...])
    }
}
