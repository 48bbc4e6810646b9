import CFFmpeg
import Foundation
import LiveCore

/// Reads PNG and JPEG files into RGBA pictures and writes PNG snapshots (the anyRTC SDK's
/// setLogoView image, the fill image of a co-host with video off, a guest's snapshot).
public enum ImageFile {
    /// A file that opened but held no picture, or could not be written.
    public enum ImageError: Error, CustomStringConvertible, Equatable, Sendable {
        case noPicture(path: String)
        case write(path: String, reason: String)

        public var description: String {
            switch self {
            case .noPicture(let path): "\(path): no picture could be decoded"
            case .write(let path, let reason): "\(path): could not be written: \(reason)"
            }
        }
    }

    /// The first picture of an image file as straight RGBA; a PNG's alpha is kept exactly.
    public static func read(path: String) throws -> RGBAImage {
        let decoder = try StreamDecoder(path: path)
        guard let frame = try decoder.nextFrame() else { throw ImageError.noPicture(path: path) }
        let width = Int(frame.pointee.width), height = Int(frame.pointee.height)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        try pixels.withUnsafeMutableBufferPointer { buffer in
            try Scaler().convertToRGBA(Scaler.Picture(avFrame: frame), pixels: buffer.baseAddress!, stride: width * 4)
        }
        return RGBAImage(width: width, height: height, pixels: pixels)
    }

    /// Writes `image` as an RGBA PNG file.
    public static func writePNG(_ image: RGBAImage, path: String) throws {
        let bytes = try pngData(image, path: path)
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        } catch {
            throw ImageError.write(path: path, reason: error.localizedDescription)
        }
    }

    /// Encodes `image` with libavcodec's PNG encoder.
    static func pngData(_ image: RGBAImage, path: String) throws -> [UInt8] {
        FFmpegLog.applyDefault()
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_PNG) else {
            throw FFmpegError(call: "avcodec_find_encoder(png) for \(path)", message: "no PNG encoder")
        }
        let codecContext = try CodecContext(codec: codec, for: "png, \(path)")
        let codecFrame = try CodecFrame(), codecPacket = try CodecPacket()
        // The raw pointers below outlive their owners' last use: keep the owners alive to the end.
        defer { withExtendedLifetime((codecContext, codecFrame, codecPacket)) {} }
        let context = codecContext.pointer, frame = codecFrame.pointer, packet = codecPacket.pointer
        context.pointee.width = Int32(image.width)
        context.pointee.height = Int32(image.height)
        context.pointee.pix_fmt = AV_PIX_FMT_RGBA
        context.pointee.time_base = AVRational(num: 1, den: 1)
        try FFmpegError.check(avcodec_open2(context, codec, nil), "avcodec_open2(png) for \(path)")
        frame.pointee.format = AV_PIX_FMT_RGBA.rawValue
        frame.pointee.width = Int32(image.width)
        frame.pointee.height = Int32(image.height)
        try FFmpegError.check(av_frame_get_buffer(frame, 0), "av_frame_get_buffer for \(path)")
        let stride = Int(frame.pointee.linesize.0), rowBytes = image.width * 4
        image.pixels.withUnsafeBufferPointer { source in
            for row in 0..<image.height {
                (frame.pointee.data.0! + row * stride).update(from: source.baseAddress! + row * rowBytes, count: rowBytes)
            }
        }
        frame.pointee.pts = 0
        try FFmpegError.check(avcodec_send_frame(context, frame), "avcodec_send_frame(png) for \(path)")
        try FFmpegError.check(avcodec_send_frame(context, nil), "avcodec_send_frame(png flush) for \(path)")
        try FFmpegError.check(avcodec_receive_packet(context, packet), "avcodec_receive_packet(png) for \(path)")
        defer { av_packet_unref(packet) }
        return Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
    }
}
