import CFFmpeg
import Foundation
import LiveCore
import Synchronization

/// Encodes I420 frames to H.264 with libx264 through libavcodec (the anyRTC SDK's
/// setVideoProfile / video encoder).
///
/// Rate control is CBR-like with a VBV: `bit_rate = rc_max_rate = bitrate` and a
/// half-second buffer (`rc_buffer_size = bitrate / 2`). The buffer lets an IDR borrow bits
/// from the frames around it, and bounds how far x264's average-bitrate control may run
/// over the target to make up for seconds it spent less: any span of T seconds carries at
/// most T + 0.5 s worth of the target. With the usual one-second buffer, after a cut for a
/// narrow uplink, the encoder ran 15–25 % over the new target for seconds (measured with
/// `Benchmarks/network.sh`), a backlog the uplink could not carry. x264's `nal-hrd=cbr`
/// is not set: it pads with filler NAL units up to the bitrate (wasting the uplink) and
/// x264 refuses to change VBV parameters while NAL HRD is on, which would break
/// `setBitrate`.
///
/// The global header (SPS/PPS, Annex B) is in `streamInfo.extradata` for RTMP and MP4,
/// and every keyframe packet also carries SPS/PPS in-band so a player joining at any IDR
/// decodes. Each packet carries its frame's capture time in a `CaptureTimeSEI`.
///
/// `encode` and `flush` run on the encode thread; `requestKeyframe` and `setBitrate`
/// may be called from any thread and take effect at the next `encode`.
public final class H264Encoder: @unchecked Sendable {
    // @unchecked: the codec state is touched only on the encode thread; what other threads
    // may ask for (a keyframe, a bitrate) is in `requests`, a Mutex.
    /// Why the encoder refused a frame.
    public enum EncoderError: Error, CustomStringConvertible, Equatable, Sendable {
        case frameSize(width: Int, height: Int, expectedWidth: Int, expectedHeight: Int)
        case flushed
        case invalidConfig(String)

        public var description: String {
            switch self {
            case .frameSize(let w, let h, let expectedWidth, let expectedHeight):
                "frame of \(w)x\(h) given to an encoder configured for \(expectedWidth)x\(expectedHeight)"
            case .flushed: "the encoder was flushed; create a new one to encode more frames"
            case .invalidConfig(let why): "invalid encoder configuration: \(why)"
            }
        }
    }

    public let config: H264EncoderConfig

    private let codecContext: CodecContext
    private let codecFrame: CodecFrame
    private let codecPacket: CodecPacket
    private var context: UnsafeMutablePointer<AVCodecContext> { codecContext.pointer }
    private var avFrame: UnsafeMutablePointer<AVFrame> { codecFrame.pointer }
    private var packet: UnsafeMutablePointer<AVPacket> { codecPacket.pointer }
    /// Set once the codec is open (a default, so a failing init still runs deinit).
    private var extradata: [UInt8] = []

    /// What other threads ask of the encode thread, taken at the next `encode`.
    private struct Requests {
        var keyframe = false
        var bitrateKbps: Int?
        var appliedBitrateKbps: Int
    }

    private let requests: Mutex<Requests>

    private var lastPTS: Int64?
    private var flushed = false
    /// Capture times by pts, for frames inside the encoder (a ring: x264 holds at most a
    /// few dozen frames even with lookahead and B-frames).
    private var capturePTS: [Int64]
    private var captureTimes: [UInt64]
    private var captureNext = 0
    private static let captureSlots = 256

    /// Opens libx264 with `config`; throws naming the failing FFmpeg call.
    public init(config: H264EncoderConfig) throws {
        guard config.width > 0, config.height > 0, config.width % 2 == 0, config.height % 2 == 0 else {
            throw EncoderError.invalidConfig("size \(config.width)x\(config.height) must be positive and even")
        }
        guard config.fps > 0, config.bitrateKbps > 0 else {
            throw EncoderError.invalidConfig("fps \(config.fps) and bitrate \(config.bitrateKbps) kbit/s must be positive")
        }
        guard ["baseline", "main", "high"].contains(config.profile) else {
            throw EncoderError.invalidConfig("profile \"\(config.profile)\" is not baseline, main or high")
        }
        FFmpegLog.applyDefault()
        self.config = config
        requests = Mutex(Requests(appliedBitrateKbps: config.bitrateKbps))
        capturePTS = [Int64](repeating: Int64.min, count: H264Encoder.captureSlots)
        captureTimes = [UInt64](repeating: 0, count: H264Encoder.captureSlots)

        guard let codec = avcodec_find_encoder_by_name("libx264") else {
            throw FFmpegError(call: "avcodec_find_encoder_by_name(libx264)", message: "libx264 is not available")
        }
        codecContext = try CodecContext(codec: codec, for: "libx264")
        codecFrame = try CodecFrame()
        codecPacket = try CodecPacket()
        let context = codecContext.pointer

        context.pointee.width = Int32(config.width)
        context.pointee.height = Int32(config.height)
        context.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        // Microsecond time base: pts go in and out as MediaTime without rounding, and
        // capture jitter never makes two frames collide on one tick.
        context.pointee.time_base = AVRational(num: 1, den: 1_000_000)
        context.pointee.framerate = AVRational(num: Int32(config.fps), den: 1)
        context.pointee.gop_size = Int32(config.gopSize)
        context.pointee.max_b_frames = Int32(config.bFrames)
        context.pointee.thread_count = Int32(config.threads)
        context.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        H264Encoder.applyBitrate(config.bitrateKbps, to: context)

        let priv = context.pointee.priv_data
        let options: [(String, String)] = [
            ("preset", config.preset), ("tune", config.tune), ("profile", config.profile),
            // An I picture requested by requestKeyframe is an IDR, so a new player can join there.
            ("forced-idr", "1"),
            // SPS/PPS before every keyframe even though they are also in the global header.
            ("x264-params", "repeat-headers=1"),
        ]
        for (name, value) in options {
            let result = av_opt_set(priv, name, value, 0)
            if result < 0 {
                throw FFmpegError(call: "av_opt_set(\(name)=\(value))", code: result)
            }
        }
        try FFmpegError.check(avcodec_open2(context, codec, nil), "avcodec_open2(libx264)")
        if let data = context.pointee.extradata, context.pointee.extradata_size > 0 {
            extradata = Array(UnsafeBufferPointer(start: data, count: Int(context.pointee.extradata_size)))
        }
    }

    /// Size, rate, current bitrate and the SPS/PPS global header.
    public var streamInfo: VideoStreamInfo {
        VideoStreamInfo(width: config.width, height: config.height, fps: config.fps, bitrate: bitrateKbps * 1000,
                        extradata: extradata)
    }

    /// The target bitrate in kbit/s, including a change not yet applied. Safe from any thread.
    public var bitrateKbps: Int {
        requests.withLock { $0.bitrateKbps ?? $0.appliedBitrateKbps }
    }

    /// Makes the next encoded frame an IDR (a new player joined, the publisher reconnected).
    /// Safe from any thread.
    public func requestKeyframe() {
        requests.withLock { $0.keyframe = true }
    }

    /// Changes the target bitrate from the next frame on (adaptive bitrate; the anyRTC SDK's
    /// network-status driven quality change). Safe from any thread.
    public func setBitrate(kbps: Int) {
        requests.withLock { $0.bitrateKbps = max(1, kbps) }
    }

    /// Encodes one frame of the configured size; returns the packets x264 finished (one
    /// per frame with zerolatency, possibly none while B-frames or lookahead fill up).
    /// Pts must increase; a pts not above the previous one is nudged up by 1 µs.
    public func encode(_ frame: VideoFrame) throws -> [EncodedVideoPacket] {
        guard !flushed else { throw EncoderError.flushed }
        guard frame.width == config.width, frame.height == config.height else {
            throw EncoderError.frameSize(width: frame.width, height: frame.height,
                                         expectedWidth: config.width, expectedHeight: config.height)
        }
        let (keyframe, newBitrate) = requests.withLock { requests in
            defer {
                requests.keyframe = false
                requests.bitrateKbps = nil
            }
            if let newBitrate = requests.bitrateKbps { requests.appliedBitrateKbps = newBitrate }
            return (requests.keyframe, requests.bitrateKbps)
        }
        if let newBitrate {
            // libx264's wrapper compares these with its parameters on every frame and
            // calls x264_encoder_reconfig when they differ.
            H264Encoder.applyBitrate(newBitrate, to: context)
        }

        var pts = frame.pts.micros
        if let lastPTS, pts <= lastPTS { pts = lastPTS + 1 }
        lastPTS = pts
        capturePTS[captureNext] = pts
        captureTimes[captureNext] = frame.captureTimeMicros
        captureNext = (captureNext + 1) % H264Encoder.captureSlots

        let f = avFrame
        f.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        f.pointee.width = Int32(frame.width)
        f.pointee.height = Int32(frame.height)
        f.pointee.data.0 = frame.y
        f.pointee.data.1 = frame.u
        f.pointee.data.2 = frame.v
        f.pointee.linesize.0 = Int32(frame.stride(0))
        f.pointee.linesize.1 = Int32(frame.stride(1))
        f.pointee.linesize.2 = Int32(frame.stride(2))
        f.pointee.pts = pts
        f.pointee.pict_type = keyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
        // Lend the frame's memory to libavcodec by reference (no copy); the buffer keeps the
        // frame alive (and out of its pool) until libavcodec lets go of it.
        let byteCount = frame.v + frame.stride(2) * (frame.height / 2) - frame.y
        guard let buffer = av_buffer_create(frame.y, byteCount, { opaque, _ in
            Unmanaged<VideoFrame>.fromOpaque(opaque!).release()
        }, Unmanaged.passRetained(frame).toOpaque(), AV_BUFFER_FLAG_READONLY) else {
            Unmanaged.passUnretained(frame).release()
            throw FFmpegError(call: "av_buffer_create", message: "out of memory")
        }
        f.pointee.buf.0 = buffer
        let sent = avcodec_send_frame(context, f)
        av_frame_unref(f)
        try FFmpegError.check(sent, "avcodec_send_frame")
        return try receivePackets()
    }

    /// Drains the frames still inside the encoder (end of stream). The encoder accepts no
    /// frames afterwards.
    public func flush() throws -> [EncodedVideoPacket] {
        guard !flushed else { return [] }
        flushed = true
        try FFmpegError.check(avcodec_send_frame(context, nil), "avcodec_send_frame(flush)")
        return try receivePackets()
    }

    private func receivePackets() throws -> [EncodedVideoPacket] {
        var packets: [EncodedVideoPacket] = []
        while true {
            let result = avcodec_receive_packet(context, packet)
            if result == FFmpegError.again || result == FFmpegError.eof { break }
            try FFmpegError.check(result, "avcodec_receive_packet")
            defer { av_packet_unref(packet) }
            packets.append(makePacket(packet.pointee))
        }
        return packets
    }

    private func makePacket(_ p: AVPacket) -> EncodedVideoPacket {
        let data = UnsafeBufferPointer(start: p.data, count: Int(p.size))
        let isKeyframe = p.flags & AV_PKT_FLAG_KEY != 0
        let captureTime = captureTime(pts: p.pts)
        var bytes: [UInt8]
        if isKeyframe && !extradata.isEmpty && !H264Encoder.hasParameterSets(data) {
            // repeat-headers normally puts them there; never let a keyframe go without.
            bytes = extradata + Array(data)
            if captureTime != 0 { bytes = CaptureTimeSEI.inserting(captureTimeMicros: captureTime, intoAnnexB: bytes) }
        } else if captureTime != 0 {
            bytes = CaptureTimeSEI.annexB(data, inserting: captureTime)
        } else {
            bytes = Array(data)
        }
        let pts = p.pts == ll_av_nopts_value() ? p.dts : p.pts
        let dts = p.dts == ll_av_nopts_value() ? pts : p.dts
        return EncodedVideoPacket(data: bytes, pts: MediaTime(micros: pts), dts: MediaTime(micros: dts),
                                  isKeyframe: isKeyframe, captureTimeMicros: captureTime)
    }

    private func captureTime(pts: Int64) -> UInt64 {
        for i in 0..<H264Encoder.captureSlots where capturePTS[i] == pts {
            capturePTS[i] = Int64.min
            return captureTimes[i]
        }
        return 0
    }

    /// True when SPS appears before the first slice of an access unit.
    static func hasParameterSets(_ data: UnsafeBufferPointer<UInt8>) -> Bool {
        var found = false
        H264Bitstream.forEachAnnexBUnit(in: data) { range in
            let type = H264Bitstream.nalType(data[range.lowerBound])
            found = type == H264Bitstream.NALType.sps
            return !found && !H264Bitstream.isVCL(type)
        }
        return found
    }

    private static func applyBitrate(_ kbps: Int, to context: UnsafeMutablePointer<AVCodecContext>) {
        let bits = kbps * 1000
        context.pointee.bit_rate = Int64(bits)
        context.pointee.rc_max_rate = Int64(bits)
        context.pointee.rc_buffer_size = Int32(clamping: bits / 2)
    }
}
