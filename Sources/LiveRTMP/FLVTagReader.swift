/// Reads an FLV stream (FLV spec v10.1 §E.2, §E.3) as it arrives: the header, then one
/// tag at a time with its PreviousTagSize checked: what an HTTP-FLV player is fed. Pure
/// (bytes in, tags out) and bounded: a tag larger than `maxTagBytes` is refused before
/// anything is allocated for it, so the reader holds at most one tag plus what the last
/// `append` brought. The counterpart of `FLVTagWriter`.
///
///     var reader = FLVTagReader()
///     reader.append(contentsOf: bytes)
///     while let tag = try reader.next() { … }   // nil: more bytes are needed
///
/// After an error the reader is spent: every later `next()` throws the same error.
public struct FLVTagReader: Sendable {
    /// Why the bytes are not an FLV stream the reader can follow.
    public enum Error: Swift.Error, Equatable, Sendable, CustomStringConvertible {
        /// The first bytes are not "FLV" (the answer is some other format).
        case notFLV
        /// A version other than 1.
        case unsupportedVersion(UInt8)
        /// The header's DataOffset is below 9 or past the budget.
        case badHeaderSize(UInt32)
        /// A tag's size is over the budget.
        case tagTooLarge(size: Int, limit: Int)
        /// The PreviousTagSize after a tag does not match the tag: the stream lost its place.
        case previousTagSizeMismatch(expected: UInt32, found: UInt32)
        /// An encrypted tag (the Filter bit): LiveLine does not decrypt.
        case encryptedTag

        public var description: String {
            switch self {
            case .notFLV: "the body is not FLV (it does not start with \"FLV\")"
            case .unsupportedVersion(let version): "FLV version \(version) is not supported (only 1)"
            case .badHeaderSize(let size): "the FLV header gives a size of \(size) bytes (9 to \(FLVTagReader.maxHeaderBytes) allowed)"
            case .tagTooLarge(let size, let limit): "an FLV tag of \(size) bytes is over the limit of \(limit)"
            case .previousTagSizeMismatch(let expected, let found):
                "an FLV tag's PreviousTagSize is \(found), not \(expected): the stream is out of step"
            case .encryptedTag: "the FLV stream is encrypted"
            }
        }
    }

    /// The header's flags.
    public struct Header: Equatable, Sendable {
        public var hasAudio: Bool
        public var hasVideo: Bool
    }

    /// One tag as read.
    public struct Tag: Equatable, Sendable {
        /// 8 audio, 9 video, 18 script data (`FLVTagWriter.TagType`); others are passed on.
        public var type: UInt8
        /// Milliseconds, TimestampExtended as the high byte (wraps like an RTMP timestamp).
        public var timestamp: UInt32
        public var payload: [UInt8]
    }

    /// The largest header accepted: the spec's is 9 bytes; a longer one is skipped up to this.
    public static let maxHeaderBytes: UInt32 = 1024
    /// The default tag budget: a 1080p keyframe at a high bitrate is well below it.
    public static let defaultMaxTagBytes = 4 << 20

    /// The largest tag payload accepted.
    public let maxTagBytes: Int
    /// The header, once read.
    public private(set) var header: Header?
    /// Tags returned so far.
    public private(set) var tagCount = 0

    private var buffer: [UInt8] = []
    private var position = 0
    private var failure: Error?
    /// The size the next PreviousTagSize must have (0 after the header).
    private var expectedPrevious: UInt32 = 0
    private var awaitingPrevious = false

    public init(maxTagBytes: Int = FLVTagReader.defaultMaxTagBytes) {
        self.maxTagBytes = min(max(0, maxTagBytes), FLVTagWriter.maxPayloadSize)
    }

    /// Bytes held and not yet returned as tags.
    public var bufferedByteCount: Int { buffer.count - position }

    /// Adds received bytes (any split).
    public mutating func append<Bytes: Sequence>(contentsOf bytes: Bytes) where Bytes.Element == UInt8 {
        guard failure == nil else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// The next tag, or nil when more bytes are needed. Reads the header first.
    public mutating func next() throws(Error) -> Tag? {
        if let failure { throw failure }
        do throws(Error) {
            return try decode()
        } catch {
            failure = error
            buffer = []
            position = 0
            throw error
        }
    }

    private mutating func decode() throws(Error) -> Tag? {
        if header == nil {
            // Refuse what is not FLV as soon as its first bytes say so.
            let signature: [UInt8] = [0x46, 0x4C, 0x56]
            for (index, byte) in signature.enumerated() where index < bufferedByteCount && buffer[position + index] != byte {
                throw .notFLV
            }
            guard bufferedByteCount >= 9 else { return nil }
            let version = buffer[position + 3]
            guard version == 1 else { throw .unsupportedVersion(version) }
            let flags = buffer[position + 4]
            let size = readUInt32(at: position + 5)
            guard size >= 9, size <= Self.maxHeaderBytes else { throw .badHeaderSize(size) }
            guard bufferedByteCount >= Int(size) else { return nil }
            header = Header(hasAudio: flags & 0x04 != 0, hasVideo: flags & 0x01 != 0)
            position += Int(size)
            expectedPrevious = 0
            awaitingPrevious = true
        }
        if awaitingPrevious {
            guard bufferedByteCount >= 4 else { return nil }
            let found = readUInt32(at: position)
            guard found == expectedPrevious else { throw .previousTagSizeMismatch(expected: expectedPrevious, found: found) }
            position += 4
            awaitingPrevious = false
        }
        guard bufferedByteCount >= FLVTagWriter.tagHeaderSize else { return nil }
        let first = buffer[position]
        // Bits 7-6 reserved (0), bit 5 the Filter (encryption), bits 4-0 the type.
        guard first & 0x20 == 0 else { throw .encryptedTag }
        let size = Int(buffer[position + 1]) << 16 | Int(buffer[position + 2]) << 8 | Int(buffer[position + 3])
        guard size <= maxTagBytes else { throw .tagTooLarge(size: size, limit: maxTagBytes) }
        guard bufferedByteCount >= FLVTagWriter.tagHeaderSize + size else { return nil }
        let timestamp = UInt32(buffer[position + 4]) << 16 | UInt32(buffer[position + 5]) << 8 | UInt32(buffer[position + 6])
            | UInt32(buffer[position + 7]) << 24
        let start = position + FLVTagWriter.tagHeaderSize
        let tag = Tag(type: first & 0x1F, timestamp: timestamp, payload: Array(buffer[start..<start + size]))
        position = start + size
        expectedPrevious = UInt32(FLVTagWriter.tagHeaderSize + size)
        awaitingPrevious = true
        tagCount += 1
        return tag
    }

    private func readUInt32(at index: Int) -> UInt32 {
        UInt32(buffer[index]) << 24 | UInt32(buffer[index + 1]) << 16 | UInt32(buffer[index + 2]) << 8 | UInt32(buffer[index + 3])
    }

    /// Drops what was read once it is most of the buffer, so appends stay amortised O(1).
    private mutating func compact() {
        guard position > 0 else { return }
        if position == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            position = 0
        } else if position >= 64 * 1024 || position * 2 >= buffer.count {
            buffer.removeFirst(position)
            position = 0
        }
    }
}
