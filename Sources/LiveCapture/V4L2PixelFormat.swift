import Foundation
import CV4L2

/// A V4L2 pixel format, as its four-character code (`YUYV`, `NV12`, `YU12`, `MJPG`).
public struct V4L2PixelFormat: Hashable, Sendable, CustomStringConvertible {
    public let fourcc: UInt32

    public init(fourcc: UInt32) { self.fourcc = fourcc }

    /// From its four characters, e.g. `V4L2PixelFormat("YUYV")`.
    public init(_ code: String) {
        var value: UInt32 = 0
        for (i, byte) in code.utf8.prefix(4).enumerated() { value |= UInt32(byte) << (8 * UInt32(i)) }
        fourcc = value
    }

    public static let yuyv = V4L2PixelFormat(fourcc: LL_V4L2_PIX_FMT_YUYV)
    public static let nv12 = V4L2PixelFormat(fourcc: LL_V4L2_PIX_FMT_NV12)
    /// Planar I420 (`YU12`), which libv4l2 also offers converted from MJPEG.
    public static let i420 = V4L2PixelFormat(fourcc: LL_V4L2_PIX_FMT_YUV420)
    public static let mjpeg = V4L2PixelFormat(fourcc: LL_V4L2_PIX_FMT_MJPEG)

    /// The formats the camera converts to I420 itself, best first.
    public static let convertible: [V4L2PixelFormat] = [.yuyv, .nv12, .i420]

    /// Bytes of one frame of `width`×`height` (with rows of `bytesPerLine`, 0 = packed),
    /// nil for compressed formats.
    public func frameBytes(width: Int, height: Int, bytesPerLine: Int = 0) -> Int? {
        switch self {
        case .yuyv: return max(bytesPerLine, width * 2) * height
        case .nv12, .i420: return max(bytesPerLine, width) * height * 3 / 2
        default: return nil
        }
    }

    public var description: String {
        let bytes = (0..<4).map { UInt8((fourcc >> (8 * UInt32($0))) & 0xFF) }
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces)
    }
}
