import CFFmpeg
import LiveCore

/// Decodes H.264 access units to I420 frames with libavcodec's h264 decoder, tuned for
/// latency: low-delay output and slice threads only (frame threads would hold frames back).
///
/// Each output frame gets the pts of the packet that produced it and the capture time
/// from that packet's `CaptureTimeSEI` (0 when it has none), so a guest can measure
/// glass-to-glass latency. Frames come from a `FramePool`: release them to recycle.
///
/// Confined to one thread at a time (the decode thread).
public final class H264Decoder: @unchecked Sendable {
    // @unchecked: the codec state is used by one thread at a time (the decode thread).
    private let codecContext: CodecContext
    private let codecFrame: CodecFrame
    private let codecPacket: CodecPacket
    private var context: UnsafeMutablePointer<AVCodecContext> { codecContext.pointer }
    private var avFrame: UnsafeMutablePointer<AVFrame> { codecFrame.pointer }
    private var packet: UnsafeMutablePointer<AVPacket> { codecPacket.pointer }
    /// Reused, padded packet buffers (libavcodec keeps a reference while it decodes).
    private var bufferPool: OpaquePointer?
    private var bufferSize = 0
    private var framePool: FramePool?
    private var scaler: Scaler?

    private var capturePTS = [Int64](repeating: Int64.min, count: 64)
    private var captureTimes = [UInt64](repeating: 0, count: 64)
    private var captureNext = 0

    /// Frames the pool keeps for reuse.
    public let poolCapacity: Int

    /// Opens the decoder. `extradata` is SPS/PPS as Annex B or as an
    /// AVCDecoderConfigurationRecord (RTMP/MP4 sequence header); without it the decoder
    /// waits for in-band SPS/PPS.
    public init(extradata: [UInt8]? = nil, poolCapacity: Int = 8) throws {
        FFmpegLog.applyDefault()
        self.poolCapacity = poolCapacity
        guard let codec = avcodec_find_decoder(AV_CODEC_ID_H264) else {
            throw FFmpegError(call: "avcodec_find_decoder(h264)", message: "no H.264 decoder")
        }
        codecContext = try CodecContext(codec: codec, for: "h264")
        codecFrame = try CodecFrame()
        codecPacket = try CodecPacket()
        let context = codecContext.pointer

        context.pointee.flags |= Int32(AV_CODEC_FLAG_LOW_DELAY)
        context.pointee.thread_type = Int32(FF_THREAD_SLICE)
        context.pointee.thread_count = 0
        context.pointee.pkt_timebase = AVRational(num: 1, den: 1_000_000)
        if let extradata, !extradata.isEmpty {
            let annexB = extradata[0] == 1
                ? try H264Bitstream.parseAVCDecoderConfigurationRecord(extradata).annexB
                : extradata
            guard let memory = av_mallocz(annexB.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
                throw FFmpegError(call: "av_mallocz(extradata)", message: "out of memory")
            }
            let bytes = memory.assumingMemoryBound(to: UInt8.self)
            bytes.update(from: annexB, count: annexB.count)
            context.pointee.extradata = bytes
            context.pointee.extradata_size = Int32(annexB.count)
        }
        try FFmpegError.check(avcodec_open2(context, codec, nil), "avcodec_open2(h264)")
    }

    deinit {
        av_buffer_pool_uninit(&bufferPool)
    }

    /// Decodes one Annex B access unit; returns the frames it completed (normally one).
    public func decode(annexB: [UInt8], pts: MediaTime) throws -> [VideoFrame] {
        try annexB.withUnsafeBufferPointer { source in
            try send(size: source.count, pts: pts) { destination in
                if let base = source.baseAddress { destination.update(from: base, count: source.count) }
                return source.count
            }
        }
    }

    /// Decodes one length-prefixed (AVCC, as FLV/RTMP and MP4 carry) access unit.
    public func decode(avcc: [UInt8], lengthSize: Int = 4, pts: MediaTime) throws -> [VideoFrame] {
        try avcc.withUnsafeBufferPointer { source in
            let size = try H264Bitstream.annexBSize(ofAVCC: source, lengthSize: lengthSize)
            return try send(size: size, pts: pts) { destination in
                try H264Bitstream.writeAnnexB(fromAVCC: source, lengthSize: lengthSize, to: destination)
            }
        }
    }

    /// Returns the frames still inside the decoder (end of stream); the decoder can then
    /// decode a new stream.
    public func flush() throws -> [VideoFrame] {
        try FFmpegError.check(avcodec_send_packet(context, nil), "avcodec_send_packet(flush)")
        let frames = try receiveFrames()
        avcodec_flush_buffers(context)
        return frames
    }

    /// Fills a pooled, padded buffer with Annex B bytes via `write` and sends it.
    private func send(size: Int, pts: MediaTime,
                      write: (UnsafeMutablePointer<UInt8>) throws -> Int) throws -> [VideoFrame] {
        guard size > 0 else { return [] }
        let padding = Int(AV_INPUT_BUFFER_PADDING_SIZE)
        if size + padding > bufferSize {
            av_buffer_pool_uninit(&bufferPool)
            bufferSize = max(256 * 1024, (size + padding) * 2)
            bufferPool = av_buffer_pool_init(bufferSize, nil)
        }
        guard let buffer = av_buffer_pool_get(bufferPool) else {
            throw FFmpegError(call: "av_buffer_pool_get", message: "out of memory")
        }
        let data = buffer.pointee.data!
        let written: Int
        do {
            written = try write(data)
        } catch {
            var ref: UnsafeMutablePointer<AVBufferRef>? = buffer
            av_buffer_unref(&ref)
            throw error
        }
        (data + written).update(repeating: 0, count: padding)

        let captureTime = CaptureTimeSEI.find(annexB: UnsafeBufferPointer(start: data, count: written)) ?? 0
        capturePTS[captureNext] = pts.micros
        captureTimes[captureNext] = captureTime
        captureNext = (captureNext + 1) % capturePTS.count

        packet.pointee.buf = buffer
        packet.pointee.data = data
        packet.pointee.size = Int32(written)
        packet.pointee.pts = pts.micros
        packet.pointee.dts = ll_av_nopts_value()
        let sent = avcodec_send_packet(context, packet)
        av_packet_unref(packet)
        try FFmpegError.check(sent, "avcodec_send_packet")
        return try receiveFrames()
    }

    private func receiveFrames() throws -> [VideoFrame] {
        var frames: [VideoFrame] = []
        while true {
            let result = avcodec_receive_frame(context, avFrame)
            if result == FFmpegError.again || result == FFmpegError.eof { break }
            try FFmpegError.check(result, "avcodec_receive_frame")
            defer { av_frame_unref(avFrame) }
            frames.append(try makeFrame(avFrame))
        }
        return frames
    }

    private func makeFrame(_ decoded: UnsafeMutablePointer<AVFrame>) throws -> VideoFrame {
        let width = Int(decoded.pointee.width), height = Int(decoded.pointee.height)
        if framePool == nil || framePool!.width != (width + 1) & ~1 || framePool!.height != (height + 1) & ~1 {
            framePool = FramePool(width: width, height: height, capacity: poolCapacity)
        }
        let frame = framePool!.acquire()
        let format = AVPixelFormat(decoded.pointee.format)
        if format == AV_PIX_FMT_YUV420P || format == AV_PIX_FMT_YUVJ420P {
            H264Decoder.copyPlanes(from: decoded, to: frame)
        } else {
            if scaler == nil { scaler = Scaler() }
            try scaler!.scale(Scaler.Picture(avFrame: decoded), into: frame, mode: .stretch)
        }
        var pts = decoded.pointee.pts
        if pts == ll_av_nopts_value() { pts = decoded.pointee.best_effort_timestamp }
        if pts != ll_av_nopts_value() {
            frame.pts = MediaTime(micros: pts)
            frame.captureTimeMicros = captureTime(pts: pts)
        }
        return frame
    }

    private func captureTime(pts: Int64) -> UInt64 {
        // Newest first: a caller that repeats pts gets the latest packet's time.
        let count = capturePTS.count
        for back in 1...count {
            let i = (captureNext - back + count) % count
            if capturePTS[i] == pts {
                capturePTS[i] = Int64.min
                return captureTimes[i]
            }
        }
        return 0
    }

    /// Copies an I420 AVFrame's planes row by row (strides differ).
    static func copyPlanes(from decoded: UnsafeMutablePointer<AVFrame>, to frame: VideoFrame) {
        let f = decoded.pointee
        let sourceWidth = Int(f.width), sourceHeight = Int(f.height)
        for p in 0..<3 {
            guard let src = p == 0 ? f.data.0 : p == 1 ? f.data.1 : f.data.2 else { continue }
            let srcStride = Int(p == 0 ? f.linesize.0 : p == 1 ? f.linesize.1 : f.linesize.2)
            let w = min(frame.planeWidth(p), p == 0 ? sourceWidth : (sourceWidth + 1) / 2)
            let rows = min(frame.planeHeight(p), p == 0 ? sourceHeight : (sourceHeight + 1) / 2)
            let dst = frame.plane(p), dstStride = frame.stride(p)
            for row in 0..<rows {
                (dst + row * dstStride).update(from: src + row * srcStride, count: w)
            }
        }
    }
}
