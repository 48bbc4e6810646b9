import LiveCore

/// Conversions from the raw layouts cameras deliver into I420 frames: tight pointer
/// loops, no allocation. Sizes are even (4:2:0 needs it); `bytesPerLine` is the
/// source's row pitch as the driver reports it.
public enum YUVConversion {
    /// Packed 4:2:2 `Y0 U Y1 V` → I420; the two chroma rows of a pair are averaged.
    public static func yuyvToI420(_ source: UnsafeRawPointer, bytesPerLine: Int, into frame: VideoFrame) {
        let w = frame.width, h = frame.height, pairs = w / 2
        let src = source.assumingMemoryBound(to: UInt8.self)
        let yBase = frame.y, uBase = frame.u, vBase = frame.v
        let ys = frame.stride(0), us = frame.stride(1), vs = frame.stride(2)
        var row = 0
        while row < h {
            let s0 = src + row * bytesPerLine, s1 = s0 + bytesPerLine
            let y0 = yBase + row * ys, y1 = y0 + ys
            let u = uBase + (row / 2) * us, v = vBase + (row / 2) * vs
            for x in 0..<pairs {
                let i = 4 * x
                y0[2 * x] = s0[i]
                y0[2 * x + 1] = s0[i + 2]
                y1[2 * x] = s1[i]
                y1[2 * x + 1] = s1[i + 2]
                u[x] = UInt8((UInt16(s0[i + 1]) + UInt16(s1[i + 1]) + 1) >> 1)
                v[x] = UInt8((UInt16(s0[i + 3]) + UInt16(s1[i + 3]) + 1) >> 1)
            }
            row += 2
        }
    }

    /// NV12 (a Y plane, then one plane of interleaved U V) → I420.
    public static func nv12ToI420(_ source: UnsafeRawPointer, bytesPerLine: Int, into frame: VideoFrame) {
        let w = frame.width, h = frame.height, cw = w / 2
        let src = source.assumingMemoryBound(to: UInt8.self)
        copyPlane(src, pitch: bytesPerLine, to: frame.y, stride: frame.stride(0), width: w, height: h)
        let uv = src + bytesPerLine * h
        let uBase = frame.u, vBase = frame.v, us = frame.stride(1), vs = frame.stride(2)
        for crow in 0..<(h / 2) {
            let s = uv + crow * bytesPerLine, u = uBase + crow * us, v = vBase + crow * vs
            for x in 0..<cw {
                u[x] = s[2 * x]
                v[x] = s[2 * x + 1]
            }
        }
    }

    /// Planar I420 (`YU12`, chroma rows half the luma pitch) → I420 with the frame's strides.
    public static func i420Copy(_ source: UnsafeRawPointer, bytesPerLine: Int, into frame: VideoFrame) {
        let w = frame.width, h = frame.height
        let src = source.assumingMemoryBound(to: UInt8.self)
        let cPitch = bytesPerLine / 2
        copyPlane(src, pitch: bytesPerLine, to: frame.y, stride: frame.stride(0), width: w, height: h)
        let u = src + bytesPerLine * h
        let v = u + cPitch * (h / 2)
        copyPlane(u, pitch: cPitch, to: frame.u, stride: frame.stride(1), width: w / 2, height: h / 2)
        copyPlane(v, pitch: cPitch, to: frame.v, stride: frame.stride(2), width: w / 2, height: h / 2)
    }

    /// Converts a frame of `format` into `frame`; false for formats it does not know.
    @discardableResult
    public static func convert(_ source: UnsafeRawPointer, format: V4L2PixelFormat, bytesPerLine: Int,
                               into frame: VideoFrame) -> Bool {
        switch format {
        case .yuyv: yuyvToI420(source, bytesPerLine: bytesPerLine, into: frame)
        case .nv12: nv12ToI420(source, bytesPerLine: bytesPerLine, into: frame)
        case .i420: i420Copy(source, bytesPerLine: bytesPerLine, into: frame)
        default: return false
        }
        return true
    }

    private static func copyPlane(_ src: UnsafePointer<UInt8>, pitch: Int, to dst: UnsafeMutablePointer<UInt8>,
                                  stride: Int, width: Int, height: Int) {
        for row in 0..<height { (dst + row * stride).update(from: src + row * pitch, count: width) }
    }
}
