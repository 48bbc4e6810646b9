/// The bytes of an FLV file or stream (FLV spec v10.1 §E.2, §E.3): the 9-byte header
/// with PreviousTagSize0, then one tag per RTMP audio, video or data message, each
/// followed by its PreviousTagSize. What HTTP-FLV and the browser player send is these
/// bytes as they are made. Pure.
public enum FLVTagWriter {
    /// The tag types (the same numbers as the RTMP message types they carry).
    public enum TagType {
        public static let audio: UInt8 = 8
        public static let video: UInt8 = 9
        public static let script: UInt8 = 18
    }

    /// The tag header's size, and the largest payload a tag's 24-bit size field holds.
    public static let tagHeaderSize = 11
    public static let maxPayloadSize = (1 << 24) - 1

    /// "FLV", version 1, the audio and video flags, header size 9, then
    /// PreviousTagSize0 (0): 13 bytes.
    public static func header(hasAudio: Bool, hasVideo: Bool) -> [UInt8] {
        let flags: UInt8 = (hasAudio ? 0x04 : 0) | (hasVideo ? 0x01 : 0)
        return [0x46, 0x4C, 0x56, 0x01, flags, 0, 0, 0, 9, 0, 0, 0, 0]
    }

    /// Appends one tag of `type` at `timestamp` (milliseconds; the high byte goes in
    /// TimestampExtended) carrying `payload`, and its PreviousTagSize. Nil, and nothing
    /// appended, when the payload is too large for a tag.
    @discardableResult
    public static func appendTag(type: UInt8, timestamp: UInt32, payload: some Collection<UInt8>, to bytes: inout [UInt8]) -> Bool {
        let size = payload.count
        guard size <= maxPayloadSize else { return false }
        bytes.reserveCapacity(bytes.count + tagHeaderSize + size + 4)
        bytes += [type, UInt8(size >> 16), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF),
                  UInt8(timestamp >> 16 & 0xFF), UInt8(timestamp >> 8 & 0xFF), UInt8(timestamp & 0xFF), UInt8(timestamp >> 24),
                  0, 0, 0]
        bytes += payload
        let total = UInt32(tagHeaderSize + size)
        bytes += [UInt8(total >> 24), UInt8(total >> 16 & 0xFF), UInt8(total >> 8 & 0xFF), UInt8(total & 0xFF)]
        return true
    }

    /// One tag with its PreviousTagSize (see `appendTag`).
    public static func tag(type: UInt8, timestamp: UInt32, payload: some Collection<UInt8>) -> [UInt8]? {
        var bytes: [UInt8] = []
        return appendTag(type: type, timestamp: timestamp, payload: payload, to: &bytes) ? bytes : nil
    }
}
