import CFFmpeg

/// A failing FFmpeg call: which function, FFmpeg's code and its message.
public struct FFmpegError: Error, CustomStringConvertible, Equatable, Sendable {
    public let call: String
    public let code: Int32
    public let message: String

    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
        var buffer = [CChar](repeating: 0, count: 256)
        message = buffer.withUnsafeMutableBufferPointer { String(cString: ll_av_err2str(code, $0.baseAddress, 256)) }
    }

    /// For failures FFmpeg reports without a code (a NULL return).
    public init(call: String, message: String) {
        self.call = call
        code = ll_averror(EINVAL)
        self.message = message
    }

    public var description: String { "\(call) failed: \(message) (\(code))" }

    public static var eof: Int32 { ll_averror_eof() }
    public static var again: Int32 { ll_averror_eagain() }
    /// AVERROR_INVALIDDATA, FFERRTAG('I','N','D','A') (a macro Swift cannot import).
    public static var invalidData: Int32 {
        -(Int32(UInt8(ascii: "I")) | Int32(UInt8(ascii: "N")) << 8 | Int32(UInt8(ascii: "D")) << 16
            | Int32(UInt8(ascii: "A")) << 24)
    }

    /// AVERROR_STREAM_NOT_FOUND, FFERRTAG(0xF8,'S','T','R'): the input has no stream of the kind asked for.
    public static var streamNotFound: Int32 {
        -(Int32(0xF8) | Int32(UInt8(ascii: "S")) << 8 | Int32(UInt8(ascii: "T")) << 16
            | Int32(UInt8(ascii: "R")) << 24)
    }

    /// Throws when `code` is negative (FFmpeg's error convention); returns it otherwise.
    @discardableResult
    public static func check(_ code: Int32, _ call: String) throws -> Int32 {
        if code < 0 { throw FFmpegError(call: call, code: code) }
        return code
    }
}
