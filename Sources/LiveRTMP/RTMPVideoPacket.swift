import LiveCore

/// One H.264 access unit as an RTMP player received it: AVCC NAL units (lengths of
/// the stream's `lengthSize`) with its timing in milliseconds, widened past the 32-bit
/// wrap of RTMP timestamps.
public struct RTMPVideoPacket: Sendable {
    /// Length-prefixed NAL units (the FLV tag's data after its 5-byte header).
    public let avcc: [UInt8]
    public let dts: MediaTime
    /// dts + the FLV composition time.
    public let pts: MediaTime
    public let isKeyframe: Bool
    /// Monotonic time (µs) the message was complete.
    public let receivedMicros: UInt64

    public init(avcc: [UInt8], dts: MediaTime, pts: MediaTime, isKeyframe: Bool, receivedMicros: UInt64) {
        self.avcc = avcc
        self.dts = dts
        self.pts = pts
        self.isKeyframe = isKeyframe
        self.receivedMicros = receivedMicros
    }
}
