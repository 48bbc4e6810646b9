import LiveCore

/// Conversions from the raw layouts cameras deliver into I420 frames: tight pointer
/// loops, no allocation. Sizes are even (4:2:0 needs it); `bytesPerLine` is the
/// source's row pitch as the driver reports it.
public enum YUVConversion {
    /// Packed 4:2:2 `Y0 U Y1 V` → I420; the two chroma rows of a pair are averaged
    /// (rounding up, as `(a + b + 1) / 2`).
    public static func yuyvToI420(_ source: UnsafeRawPointer, bytesPerLine: Int, into frame: VideoFrame) {
        let w = frame.width, h = frame.height
        let yBase = UnsafeMutableRawPointer(frame.y), uBase = UnsafeMutableRawPointer(frame.u)
        let vBase = UnsafeMutableRawPointer(frame.v)
        let ys = frame.stride(0), us = frame.stride(1), vs = frame.stride(2)
        // Four pixels (8 source bytes) per step, as 64-bit words; the tail pair by bytes.
        let quads = w / 4
        var row = 0
        while row < h {
            let s0 = source + row * bytesPerLine, s1 = s0 + bytesPerLine
            let y0 = yBase + row * ys, y1 = y0 + ys
            let u = uBase + (row / 2) * us, v = vBase + (row / 2) * vs
            for q in 0..<quads {
                let a = s0.loadUnaligned(fromByteOffset: q &* 8, as: UInt64.self)
                let b = s1.loadUnaligned(fromByteOffset: q &* 8, as: UInt64.self)
                y0.storeBytes(of: evenBytes(a), toByteOffset: q &* 4, as: UInt32.self)
                y1.storeBytes(of: evenBytes(b), toByteOffset: q &* 4, as: UInt32.self)
                // Byte-wise rounded average of the two rows, without carries between bytes.
                let avg = (a | b) &- (((a ^ b) >> 1) & 0x7F7F_7F7F_7F7F_7F7F)
                let chroma = evenBytes(avg >> 8)  // U0 V0 U1 V1
                u.storeBytes(of: UInt16(truncatingIfNeeded: (chroma & 0xFF) | ((chroma >> 8) & 0xFF00)),
                             toByteOffset: q &* 2, as: UInt16.self)
                v.storeBytes(of: UInt16(truncatingIfNeeded: ((chroma >> 8) & 0xFF) | ((chroma >> 16) & 0xFF00)),
                             toByteOffset: q &* 2, as: UInt16.self)
            }
            if w % 4 != 0 {
                let x = w / 2 - 1, i = 4 * x
                let b0 = s0.assumingMemoryBound(to: UInt8.self), b1 = s1.assumingMemoryBound(to: UInt8.self)
                y0.storeBytes(of: b0[i], toByteOffset: 2 * x, as: UInt8.self)
                y0.storeBytes(of: b0[i + 2], toByteOffset: 2 * x + 1, as: UInt8.self)
                y1.storeBytes(of: b1[i], toByteOffset: 2 * x, as: UInt8.self)
                y1.storeBytes(of: b1[i + 2], toByteOffset: 2 * x + 1, as: UInt8.self)
                u.storeBytes(of: UInt8((UInt16(b0[i + 1]) + UInt16(b1[i + 1]) + 1) >> 1), toByteOffset: x, as: UInt8.self)
                v.storeBytes(of: UInt8((UInt16(b0[i + 3]) + UInt16(b1[i + 3]) + 1) >> 1), toByteOffset: x, as: UInt8.self)
            }
            row += 2
        }
    }

    /// Bytes 0, 2, 4, 6 of a little-endian word, packed into 32 bits.
    @inline(__always)
    private static func evenBytes(_ x: UInt64) -> UInt32 {
        let t = x & 0x00FF_00FF_00FF_00FF
        let pairs = (t | (t >> 8)) & 0x0000_FFFF_0000_FFFF
        return UInt32(truncatingIfNeeded: pairs | (pairs >> 16))
    }

    /// NV12 (a Y plane, then one plane of interleaved U V) → I420.
    public static func nv12ToI420(_ source: UnsafeRawPointer, bytesPerLine: Int, into frame: VideoFrame) {
        let w = frame.width, h = frame.height, cw = w / 2
        let src = source.assumingMemoryBound(to: UInt8.self)
        copyPlane(src, pitch: bytesPerLine, to: frame.y, stride: frame.stride(0), width: w, height: h)
        let uv = source + bytesPerLine * h
        let uBase = UnsafeMutableRawPointer(frame.u), vBase = UnsafeMutableRawPointer(frame.v)
        let us = frame.stride(1), vs = frame.stride(2)
        let quads = cw / 4
        for crow in 0..<(h / 2) {
            let s = uv + crow * bytesPerLine, u = uBase + crow * us, v = vBase + crow * vs
            for q in 0..<quads {
                let word = s.loadUnaligned(fromByteOffset: q &* 8, as: UInt64.self)
                u.storeBytes(of: evenBytes(word), toByteOffset: q &* 4, as: UInt32.self)
                v.storeBytes(of: evenBytes(word >> 8), toByteOffset: q &* 4, as: UInt32.self)
            }
            let bytes = s.assumingMemoryBound(to: UInt8.self)
            for x in (4 * quads)..<cw {
                u.storeBytes(of: bytes[2 * x], toByteOffset: x, as: UInt8.self)
                v.storeBytes(of: bytes[2 * x + 1], toByteOffset: x, as: UInt8.self)
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
