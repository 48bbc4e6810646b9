import CFFmpeg
import LiveCore

/// Converts and resizes pictures into I420 `VideoFrame`s (or RGBA images) with libswscale,
/// fitting them by a `RenderMode` (the anyRTC SDK's setVideoRenderMode / scaleAspectFill,
/// scaleToFill, scaleAspectFit).
///
/// Owns its `SwsContext`s: one per geometry (source size and format, destination size
/// and format), kept in a small cache so a compositor drawing several tiles per frame
/// reuses them instead of recreating a context per call. Colours use the BT.601
/// limited-range matrix throughout (swscale's default, as `YUVColor` does).
///
/// Confined to one thread at a time (it keeps mutable contexts); it may be handed to
/// another thread between uses, hence `@unchecked Sendable`.
public final class Scaler: @unchecked Sendable {
    // @unchecked: the swscale context is used by one thread at a time (see above).
    /// A rectangle of a frame in pixels. For I420 destinations every field must be even.
    public struct Rect: Equatable, Hashable, Sendable, CustomStringConvertible {
        public var x: Int
        public var y: Int
        public var width: Int
        public var height: Int

        public init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }

        public var description: String { "\(width)x\(height)+\(x)+\(y)" }
    }

    /// A picture in memory the scaler reads from: plane pointers and strides, not owned.
    /// The memory must stay valid for the duration of the `scale` call.
    public struct Picture {
        public let width: Int
        public let height: Int
        let format: AVPixelFormat
        var planes: (UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?)
        var strides: (Int32, Int32, Int32, Int32)

        init(format: AVPixelFormat, width: Int, height: Int,
             planes: (UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?),
             strides: (Int32, Int32, Int32, Int32)) {
            self.format = format
            self.width = width
            self.height = height
            self.planes = planes
            self.strides = strides
        }

        /// An I420 `VideoFrame`.
        public init(frame: VideoFrame) {
            self.init(format: AV_PIX_FMT_YUV420P, width: frame.width, height: frame.height,
                      planes: (UnsafePointer(frame.y), UnsafePointer(frame.u), UnsafePointer(frame.v), nil),
                      strides: (Int32(frame.stride(0)), Int32(frame.stride(1)), Int32(frame.stride(2)), 0))
        }

        /// Planar I420 memory.
        public static func i420(y: UnsafePointer<UInt8>, yStride: Int, u: UnsafePointer<UInt8>, uStride: Int,
                                v: UnsafePointer<UInt8>, vStride: Int, width: Int, height: Int) -> Picture {
            Picture(format: AV_PIX_FMT_YUV420P, width: width, height: height, planes: (y, u, v, nil),
                    strides: (Int32(yStride), Int32(uStride), Int32(vStride), 0))
        }

        /// Semi-planar NV12 memory: a Y plane and an interleaved U/V plane (V4L2 NV12, decoders).
        public static func nv12(y: UnsafePointer<UInt8>, yStride: Int, uv: UnsafePointer<UInt8>, uvStride: Int,
                                width: Int, height: Int) -> Picture {
            Picture(format: AV_PIX_FMT_NV12, width: width, height: height, planes: (y, uv, nil, nil),
                    strides: (Int32(yStride), Int32(uvStride), 0, 0))
        }

        /// Packed memory of one plane: `.yuyv` (V4L2 YUYV 4:2:2), `.rgba` or `.bgra`
        /// (alpha is ignored when the destination is I420).
        public static func packed(_ format: PixelFormat, data: UnsafePointer<UInt8>, stride: Int,
                                  width: Int, height: Int) throws -> Picture {
            let avFormat: AVPixelFormat
            switch format {
            case .yuyv: avFormat = AV_PIX_FMT_YUYV422
            case .rgba: avFormat = AV_PIX_FMT_RGBA
            case .bgra: avFormat = AV_PIX_FMT_BGRA
            case .i420, .nv12: throw ScalerError.notPacked(format)
            }
            return Picture(format: avFormat, width: width, height: height, planes: (data, nil, nil, nil),
                           strides: (Int32(stride), 0, 0, 0))
        }

        /// A decoded `AVFrame` in whatever format the decoder produced.
        init(avFrame frame: UnsafePointer<AVFrame>) {
            let f = frame.pointee
            self.init(format: AVPixelFormat(f.format), width: Int(f.width), height: Int(f.height),
                      planes: (UnsafePointer(f.data.0), UnsafePointer(f.data.1),
                               UnsafePointer(f.data.2), UnsafePointer(f.data.3)),
                      strides: (f.linesize.0, f.linesize.1, f.linesize.2, f.linesize.3))
        }

        /// The sub-picture at (x, y) of the given size (x, y even), by moving plane pointers.
        func cropped(x: Int, y: Int, width: Int, height: Int) -> Picture {
            guard x != 0 || y != 0 else {
                return Picture(format: format, width: width, height: height, planes: planes, strides: strides)
            }
            guard let desc = av_pix_fmt_desc_get(format) else { return self }
            let d = desc.pointee
            var offsets: (Int, Int, Int, Int) = (0, 0, 0, 0)
            let isPalette = d.flags & UInt64(AV_PIX_FMT_FLAG_PAL) != 0
            let isRGB = d.flags & UInt64(AV_PIX_FMT_FLAG_RGB) != 0
            withUnsafeMutableBytes(of: &offsets) { raw in
                let offsetsOf = raw.bindMemory(to: Int.self)
                withUnsafeBytes(of: d.comp) { compRaw in
                    let comps = compRaw.bindMemory(to: AVComponentDescriptor.self)
                    withUnsafeBytes(of: strides) { strideRaw in
                        let strideOf = strideRaw.bindMemory(to: Int32.self)
                        for c in 0..<Int(d.nb_components) {
                            let comp = comps[c]
                            let plane = Int(comp.plane)
                            if isPalette && plane != 0 { continue }
                            let chroma = !isRGB && (c == 1 || c == 2)
                            let xs = chroma ? Int(d.log2_chroma_w) : 0
                            let ys = chroma ? Int(d.log2_chroma_h) : 0
                            offsetsOf[plane] = (y >> ys) * Int(strideOf[plane]) + (x >> xs) * Int(comp.step)
                        }
                    }
                }
            }
            return Picture(format: format, width: width, height: height,
                           planes: (planes.0.map { $0 + offsets.0 }, planes.1.map { $0 + offsets.1 },
                                    planes.2.map { $0 + offsets.2 }, planes.3.map { $0 + offsets.3 }),
                           strides: strides)
        }
    }

    /// Why a picture could not be scaled.
    public enum ScalerError: Error, CustomStringConvertible, Equatable, Sendable {
        case notPacked(PixelFormat)
        case invalidRect(Rect, frameWidth: Int, frameHeight: Int)
        case invalidSize(width: Int, height: Int)
        case contextCreation(String)

        public var description: String {
            switch self {
            case .notPacked(let format): "\(format) is not a packed single-plane format"
            case .invalidRect(let rect, let w, let h):
                "rectangle \(rect) is empty, odd or outside the \(w)x\(h) frame"
            case .invalidSize(let w, let h): "picture size \(w)x\(h) is too small"
            case .contextCreation(let what): "sws_getContext failed for \(what)"
            }
        }
    }

    /// The swscale interpolation filter.
    public enum Filter: Sendable {
        case fastBilinear, bilinear, bicubic

        var flags: Int32 {
            switch self {
            case .fastBilinear: SWS_FAST_BILINEAR
            case .bilinear: SWS_BILINEAR
            case .bicubic: SWS_BICUBIC
            }
        }
    }

    private struct Geometry: Equatable {
        var srcWidth: Int32, srcHeight: Int32, srcFormat: Int32
        var dstWidth: Int32, dstHeight: Int32, dstFormat: Int32
    }

    private struct CachedContext {
        var geometry: Geometry
        var context: OpaquePointer
        var lastUse: UInt64
    }

    public let filter: Filter
    /// Contexts kept at most; a compositor needs one per distinct tile geometry.
    public let cacheCapacity: Int
    private var cache: [CachedContext] = []
    private var useCounter: UInt64 = 0
    private var scratchFrames: [VideoFrame] = []

    public init(filter: Filter = .bilinear, cacheCapacity: Int = 8) {
        self.filter = filter
        self.cacheCapacity = max(1, cacheCapacity)
        cache.reserveCapacity(self.cacheCapacity)
    }

    deinit {
        for entry in cache { sws_freeContext(entry.context) }
    }

    /// How many swscale contexts are alive (for tests: geometry changes, not calls, create them).
    public var contextCount: Int { cache.count }

    // MARK: - Scaling into I420 frames

    /// Scales `source` into the whole of `destination` by `mode`.
    public func scale(_ source: VideoFrame, into destination: VideoFrame, mode: RenderMode = .aspectFill) throws {
        try scale(Picture(frame: source), into: destination,
                  rect: Rect(x: 0, y: 0, width: destination.width, height: destination.height), mode: mode)
    }

    /// Scales `source` into `rect` of `destination` by `mode`; pixels outside `rect` are untouched.
    public func scale(_ source: VideoFrame, into destination: VideoFrame, rect: Rect, mode: RenderMode) throws {
        try scale(Picture(frame: source), into: destination, rect: rect, mode: mode)
    }

    /// Scales a picture into the whole of `destination` by `mode`.
    public func scale(_ source: Picture, into destination: VideoFrame, mode: RenderMode = .aspectFill) throws {
        try scale(source, into: destination,
                  rect: Rect(x: 0, y: 0, width: destination.width, height: destination.height), mode: mode)
    }

    /// Scales a picture into `rect` of `destination` (x, y, width, height even) by `mode`:
    /// aspect-fill crops the source's centre to the rectangle's shape, aspect-fit centres
    /// the whole source and paints the bars black, stretch ignores the aspect ratio.
    /// Pixels outside `rect` are untouched.
    public func scale(_ source: Picture, into destination: VideoFrame, rect: Rect, mode: RenderMode) throws {
        guard rect.width >= 2, rect.height >= 2, rect.x >= 0, rect.y >= 0,
              rect.x + rect.width <= destination.width, rect.y + rect.height <= destination.height,
              (rect.x | rect.y | rect.width | rect.height) & 1 == 0 else {
            throw ScalerError.invalidRect(rect, frameWidth: destination.width, frameHeight: destination.height)
        }
        guard source.width >= 2, source.height >= 2 else {
            throw ScalerError.invalidSize(width: source.width, height: source.height)
        }
        let (crop, inner) = Scaler.placement(sourceWidth: source.width, sourceHeight: source.height,
                                             rect: rect, mode: mode)
        if mode == .aspectFit && inner != rect {
            Scaler.fill(destination, rect: rect, except: inner, color: YUVColor(y: 16, u: 128, v: 128))
        }
        let picture = crop.x == 0 && crop.y == 0 && crop.width == source.width && crop.height == source.height
            ? source : source.cropped(x: crop.x, y: crop.y, width: crop.width, height: crop.height)
        if picture.format == AV_PIX_FMT_YUV420P && picture.width == inner.width && picture.height == inner.height {
            copyI420(picture, into: destination, at: inner)
            return
        }
        // swscale's SIMD output writes whole vectors, past the end of a row (seen: 50 → 56
        // pixels). Full-width rows spill only into the stride padding; any other rectangle
        // is scaled into a scratch frame of its own size and copied, so neighbouring pixels
        // (other tiles, the bars) stay untouched.
        let target: VideoFrame, origin: Rect
        if inner.x == 0 && inner.width == destination.width {
            target = destination
            origin = inner
        } else {
            target = scratchFrame(width: inner.width, height: inner.height)
            origin = Rect(x: 0, y: 0, width: inner.width, height: inner.height)
        }
        var dstPlanes: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?,
                        UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?) = (
            target.y + origin.y * target.stride(0) + origin.x,
            target.u + origin.y / 2 * target.stride(1) + origin.x / 2,
            target.v + origin.y / 2 * target.stride(2) + origin.x / 2, nil)
        let dstStrides: (Int32, Int32, Int32, Int32) = (Int32(target.stride(0)), Int32(target.stride(1)),
                                                        Int32(target.stride(2)), 0)
        try convert(picture, toFormat: AV_PIX_FMT_YUV420P, width: inner.width, height: inner.height,
                    planes: &dstPlanes, strides: dstStrides)
        if target !== destination {
            copyI420(Picture(frame: target), into: destination, at: inner)
        }
    }

    /// A reusable frame of one tile size (kept per size, like the contexts).
    private func scratchFrame(width: Int, height: Int) -> VideoFrame {
        if let index = scratchFrames.firstIndex(where: { $0.width == width && $0.height == height }) {
            if index != 0 { scratchFrames.swapAt(0, index) }
            return scratchFrames[0]
        }
        let frame = VideoFrame(width: width, height: height)
        if scratchFrames.count >= cacheCapacity { scratchFrames.removeLast() }
        scratchFrames.insert(frame, at: 0)
        return frame
    }

    /// The source crop and the destination rectangle a render mode maps a picture to.
    /// Pure geometry; offsets and sizes are even so I420 chroma stays aligned.
    public static func placement(sourceWidth sw: Int, sourceHeight sh: Int, rect: Rect,
                                 mode: RenderMode) -> (crop: Rect, inner: Rect) {
        let full = Rect(x: 0, y: 0, width: sw, height: sh)
        let wider = sw * rect.height > rect.width * sh
        let taller = sw * rect.height < rect.width * sh
        switch mode {
        case .stretch:
            return (full, rect)
        case .aspectFill:
            if wider {
                let w = max(2, (sh * rect.width / rect.height) & ~1)
                return (Rect(x: ((sw - w) / 2) & ~1, y: 0, width: w, height: sh), rect)
            } else if taller {
                let h = max(2, (sw * rect.height / rect.width) & ~1)
                return (Rect(x: 0, y: ((sh - h) / 2) & ~1, width: sw, height: h), rect)
            }
            return (full, rect)
        case .aspectFit:
            if wider {
                let h = max(2, (rect.width * sh / sw) & ~1)
                return (full, Rect(x: rect.x, y: rect.y + ((rect.height - h) / 2) & ~1, width: rect.width, height: h))
            } else if taller {
                let w = max(2, (rect.height * sw / sh) & ~1)
                return (full, Rect(x: rect.x + ((rect.width - w) / 2) & ~1, y: rect.y, width: w, height: rect.height))
            }
            return (full, rect)
        }
    }

    // MARK: - RGBA images

    /// The frame as a packed RGBA picture (alpha 255).
    public func rgbaImage(from frame: VideoFrame) throws -> RGBAImage {
        let count = frame.width * frame.height * 4
        var pixels = [UInt8](repeating: 0, count: count)
        try pixels.withUnsafeMutableBufferPointer { buffer in
            try convertToRGBA(Picture(frame: frame), pixels: buffer.baseAddress!, stride: frame.width * 4)
        }
        return RGBAImage(width: frame.width, height: frame.height, pixels: pixels)
    }

    /// Draws an RGBA picture into `frame` by `mode` (alpha is ignored: a frame is opaque).
    public func frame(from image: RGBAImage, into frame: VideoFrame, mode: RenderMode = .aspectFill) throws {
        try image.pixels.withUnsafeBufferPointer { buffer in
            let picture = try Picture.packed(.rgba, data: buffer.baseAddress!, stride: image.width * 4,
                                             width: image.width, height: image.height)
            try scale(picture, into: frame, mode: mode)
        }
    }

    /// Converts a picture of any format to RGBA at the same size (`stride` bytes per row).
    /// swscale writes into padded scratch rows first (it may write past a row's end) and
    /// only `width * 4` bytes per row reach `pixels`.
    func convertToRGBA(_ picture: Picture, pixels: UnsafeMutablePointer<UInt8>, stride: Int) throws {
        let rowBytes = picture.width * 4
        let scratchStride = (rowBytes + 63) & ~63
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: scratchStride * picture.height + 64)
        defer { scratch.deallocate() }
        var dstPlanes: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?,
                        UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?) = (scratch, nil, nil, nil)
        try convert(picture, toFormat: AV_PIX_FMT_RGBA, width: picture.width, height: picture.height,
                    planes: &dstPlanes, strides: (Int32(scratchStride), 0, 0, 0))
        for row in 0..<picture.height {
            (pixels + row * stride).update(from: scratch + row * scratchStride, count: rowBytes)
        }
    }

    // MARK: - swscale

    private func convert(_ picture: Picture, toFormat format: AVPixelFormat, width: Int, height: Int,
                         planes: inout (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?,
                                        UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?),
                         strides: (Int32, Int32, Int32, Int32)) throws {
        let context = try context(for: Geometry(
            srcWidth: Int32(picture.width), srcHeight: Int32(picture.height), srcFormat: picture.format.rawValue,
            dstWidth: Int32(width), dstHeight: Int32(height), dstFormat: format.rawValue))
        var srcPlanes = picture.planes
        var srcStrides = picture.strides
        var dstStrides = strides
        let result = withUnsafePointer(to: &srcPlanes) { srcRaw in
            withUnsafePointer(to: &srcStrides) { srcStrideRaw in
                withUnsafePointer(to: &planes) { dstRaw in
                    withUnsafePointer(to: &dstStrides) { dstStrideRaw in
                        sws_scale(context,
                                  UnsafeRawPointer(srcRaw).assumingMemoryBound(to: UnsafePointer<UInt8>?.self),
                                  UnsafeRawPointer(srcStrideRaw).assumingMemoryBound(to: Int32.self),
                                  0, Int32(picture.height),
                                  UnsafeRawPointer(dstRaw).assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self),
                                  UnsafeRawPointer(dstStrideRaw).assumingMemoryBound(to: Int32.self))
                    }
                }
            }
        }
        try FFmpegError.check(result, "sws_scale")
    }

    private func context(for geometry: Geometry) throws -> OpaquePointer {
        useCounter += 1
        if let index = cache.firstIndex(where: { $0.geometry == geometry }) {
            cache[index].lastUse = useCounter
            return cache[index].context
        }
        var flags = filter.flags
        let rgbInvolved = Scaler.isRGB(geometry.srcFormat) || Scaler.isRGB(geometry.dstFormat)
        // Exact rounding keeps flat colours within a step through RGB ↔ YUV round trips.
        if rgbInvolved { flags |= SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP }
        guard let context = sws_getContext(
            geometry.srcWidth, geometry.srcHeight, AVPixelFormat(geometry.srcFormat),
            geometry.dstWidth, geometry.dstHeight, AVPixelFormat(geometry.dstFormat),
            flags, nil, nil, nil) else {
            throw ScalerError.contextCreation(
                "\(geometry.srcWidth)x\(geometry.srcHeight) format \(geometry.srcFormat) → "
                    + "\(geometry.dstWidth)x\(geometry.dstHeight) format \(geometry.dstFormat)")
        }
        let entry = CachedContext(geometry: geometry, context: context, lastUse: useCounter)
        if cache.count < cacheCapacity {
            cache.append(entry)
        } else {
            let oldest = cache.indices.min { cache[$0].lastUse < cache[$1].lastUse }!
            sws_freeContext(cache[oldest].context)
            cache[oldest] = entry
        }
        return context
    }

    private static func isRGB(_ format: Int32) -> Bool {
        guard let desc = av_pix_fmt_desc_get(AVPixelFormat(format)) else { return false }
        return desc.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB) != 0
    }

    // MARK: - Plain pixel work

    private func copyI420(_ picture: Picture, into frame: VideoFrame, at rect: Rect) {
        for p in 0..<3 {
            let src: UnsafePointer<UInt8> = p == 0 ? picture.planes.0! : p == 1 ? picture.planes.1! : picture.planes.2!
            let srcStride = Int(p == 0 ? picture.strides.0 : p == 1 ? picture.strides.1 : picture.strides.2)
            let shift = p == 0 ? 0 : 1
            let dst = frame.plane(p) + (rect.y >> shift) * frame.stride(p) + (rect.x >> shift)
            let width = rect.width >> shift, rows = rect.height >> shift
            for row in 0..<rows {
                (dst + row * frame.stride(p)).update(from: src + row * srcStride, count: width)
            }
        }
    }

    /// Paints `rect` minus `inner` (the letterbox bars) with one colour.
    static func fill(_ frame: VideoFrame, rect: Rect, except inner: Rect, color: YUVColor) {
        func band(_ band: Rect) {
            if band.width > 0 && band.height > 0 { fill(frame, rect: band, color: color) }
        }
        band(Rect(x: rect.x, y: rect.y, width: rect.width, height: inner.y - rect.y))
        band(Rect(x: rect.x, y: inner.y + inner.height, width: rect.width,
                  height: rect.y + rect.height - inner.y - inner.height))
        band(Rect(x: rect.x, y: inner.y, width: inner.x - rect.x, height: inner.height))
        band(Rect(x: inner.x + inner.width, y: inner.y, width: rect.x + rect.width - inner.x - inner.width,
                  height: inner.height))
    }

    /// Paints an even rectangle of `frame` with one colour.
    public static func fill(_ frame: VideoFrame, rect: Rect, color: YUVColor) {
        for p in 0..<3 {
            let value = p == 0 ? color.y : p == 1 ? color.u : color.v
            let shift = p == 0 ? 0 : 1
            let stride = frame.stride(p)
            let base = frame.plane(p) + (rect.y >> shift) * stride + (rect.x >> shift)
            for row in 0..<(rect.height >> shift) {
                (base + row * stride).update(repeating: value, count: rect.width >> shift)
            }
        }
    }
}
