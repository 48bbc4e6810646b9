/// One encoded H.264 access unit as it leaves the encoder: Annex B NAL units
/// (start codes), with its timing. Immutable, so sinks on other threads share it.
public struct EncodedVideoPacket: Sendable {
    /// Annex B bytes: 00 00 00 01 + NAL, repeated.
    public let data: [UInt8]
    public let pts: MediaTime
    public let dts: MediaTime
    public let isKeyframe: Bool
    /// Wall-clock capture time (µs since the epoch) of the frame inside, 0 if unknown.
    public let captureTimeMicros: UInt64

    public init(data: [UInt8], pts: MediaTime, dts: MediaTime, isKeyframe: Bool, captureTimeMicros: UInt64) {
        self.data = data
        self.pts = pts
        self.dts = dts
        self.isKeyframe = isKeyframe
        self.captureTimeMicros = captureTimeMicros
    }
}

/// What a decoder or muxer needs to know about an H.264 stream before its first packet.
public struct VideoStreamInfo: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var fps: Int
    /// Target bitrate in bits per second.
    public var bitrate: Int
    /// SPS and PPS in Annex B form (the encoder's global header).
    public var extradata: [UInt8]

    public init(width: Int, height: Int, fps: Int, bitrate: Int, extradata: [UInt8]) {
        self.width = width
        self.height = height
        self.fps = fps
        self.bitrate = bitrate
        self.extradata = extradata
    }
}

/// How a picture is fitted into a rectangle of another shape; raw values are the
/// the anyRTC SDK's render mode (scaleAspectFill=0, scaleToFill=1, scaleAspectFit=2).
public enum RenderMode: Int, Sendable, CaseIterable {
    /// Fill the rectangle, cropping what sticks out (the default).
    case aspectFill = 0
    /// Stretch to the rectangle, ignoring the aspect ratio.
    case stretch = 1
    /// Fit inside the rectangle, with black bars.
    case aspectFit = 2

    public init?(name: String) {
        switch name.lowercased() {
        case "fill", "aspect-fill", "aspectfill", "crop": self = .aspectFill
        case "stretch", "scale-to-fill": self = .stretch
        case "fit", "aspect-fit", "aspectfit", "letterbox": self = .aspectFit
        default: return nil
        }
    }
}

/// Packed and planar layouts the edges of the pipeline meet (V4L2, PNG, decoders).
public enum PixelFormat: String, Sendable, CaseIterable {
    case i420, nv12, yuyv, rgba, bgra
}
