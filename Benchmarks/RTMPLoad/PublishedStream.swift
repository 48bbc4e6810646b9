import Foundation

/// The video frames of the recording a publisher loops (`ffmpeg -re -stream_loop -1 -i
/// FILE -c copy`): what was published, in order, so a player can count its frames
/// against it. Read from the FLV file itself (FLV 1.0 §E): each video tag that carries
/// an AVC picture (packet type 1) is one frame; sequence headers and the end-of-sequence
/// tag are not frames.
///
/// A relay passes each frame's FLV tag body on unchanged as one RTMP video message, so a
/// message's length names the frame it carries. Keyframes are told apart by that length
/// (the file is refused when two keyframes have the same length), and the frames
/// published from one keyframe to the next received one are counted in the file, going
/// round it as the publisher loops.
///
/// Pure value: bytes in, frame lists out.
struct PublishedStream: Sendable {
    enum Error: Swift.Error, CustomStringConvertible {
        case notFLV
        case truncated(offset: Int)
        case tooManyFrames(Int)
        case noKeyframe
        case sameLengthKeyframes(length: Int)

        var description: String {
            switch self {
            case .notFLV: "the published recording is not an FLV file"
            case .truncated(let offset): "the published recording ends inside a tag at byte \(offset)"
            case .tooManyFrames(let limit): "the published recording has more than \(limit) video frames"
            case .noKeyframe: "the published recording has no keyframe"
            case .sameLengthKeyframes(let length):
                "two keyframes of the published recording are \(length) bytes long, so a player cannot tell them apart; make the recording again"
            }
        }
    }

    /// Frames in one pass of the recording.
    let frameCount: Int
    /// Index of the frame of each keyframe length.
    private let keyframeIndex: [Int: Int]

    static let maxFrames = 1_000_000

    /// Reads the FLV file at `path`.
    init(path: String) throws {
        try self.init(flv: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// Parses a whole FLV file; checks every length against the bytes there are.
    init(flv bytes: [UInt8]) throws {
        guard bytes.count >= 9, bytes[0] == 0x46, bytes[1] == 0x4C, bytes[2] == 0x56 else { throw Error.notFLV }
        let headerSize = Int(bytes[5]) << 24 | Int(bytes[6]) << 16 | Int(bytes[7]) << 8 | Int(bytes[8])
        guard headerSize >= 9 else { throw Error.notFLV }
        var at = headerSize + 4  // the header, then PreviousTagSize0
        var frames = 0
        var keyframes: [Int: Int] = [:]
        while at < bytes.count {
            guard at + 11 <= bytes.count else { throw Error.truncated(offset: at) }
            let type = bytes[at] & 0x1F
            let size = Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            let body = at + 11
            guard body + size + 4 <= bytes.count else { throw Error.truncated(offset: at) }
            // Video (9), AVC (codec 7), a picture (packet type 1).
            if type == 9, size >= 2, bytes[body] & 0x0F == 7, bytes[body + 1] == 1 {
                if bytes[body] >> 4 == 1 {
                    guard keyframes.updateValue(frames, forKey: size) == nil else { throw Error.sameLengthKeyframes(length: size) }
                }
                frames += 1
                guard frames <= Self.maxFrames else { throw Error.tooManyFrames(Self.maxFrames) }
            }
            at = body + size + 4
        }
        guard !keyframes.isEmpty else { throw Error.noKeyframe }
        frameCount = frames
        keyframeIndex = keyframes
    }

    /// The position in the recording of the keyframe whose message is `length` bytes
    /// long; nil when no keyframe of the recording is.
    func keyframe(length: Int) -> Int? { keyframeIndex[length] }

    /// Frames published from the frame at `from` up to, not including, the next frame at
    /// `to`, going round the recording (`from == to`: one whole pass).
    func framesBetween(_ from: Int, _ to: Int) -> Int {
        let distance = (to - from) % frameCount
        return distance > 0 ? distance : distance + frameCount
    }
}
