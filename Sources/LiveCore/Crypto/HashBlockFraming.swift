/// What SHA-1 and SHA-256 share (FIPS 180-4 §5.1.1, §5.2.1): the message is cut into
/// 64-byte blocks, and the last is padded with 0x80, zeros and the message's length in
/// bits, big-endian, so the padded length is a multiple of 64. Each hash keeps one of
/// these and hands it the function that folds a block into its state.
struct HashBlockFraming: Sendable {
    static let blockSize = 64
    /// The bytes of an unfinished block, fewer than 64.
    private var pending: [UInt8] = []
    /// Bytes fed so far. The length field is this × 8 modulo 2⁶⁴ (FIPS 180-4 §5.1.1
    /// allows messages below 2⁶⁴ bits), hence the wrapping arithmetic.
    private var byteCount: UInt64 = 0

    init() { pending.reserveCapacity(Self.blockSize) }

    /// Appends `bytes`, calling `compress` with each 64-byte block that completes.
    mutating func feed<Bytes: Collection>(_ bytes: Bytes, _ compress: (UnsafeBufferPointer<UInt8>) -> Void)
    where Bytes.Element == UInt8 {
        byteCount &+= UInt64(bytes.count)
        let done: Void? = bytes.withContiguousStorageIfAvailable { feedContiguous($0, compress) }
        if done == nil { Array(bytes).withUnsafeBufferPointer { feedContiguous($0, compress) } }
    }

    /// Pads the message and compresses the last block or two; the framing is spent.
    mutating func finish(_ compress: (UnsafeBufferPointer<UInt8>) -> Void) {
        let bitLength = byteCount &* 8
        // 0x80, then zeros up to 56 mod 64, then the 8-byte length.
        let zeros = (Self.blockSize &+ 55 &- pending.count) % Self.blockSize
        var tail = [UInt8](repeating: 0, count: 1 + zeros + 8)
        tail[0] = 0x80
        for index in 0..<8 {
            tail[tail.count - 1 - index] = UInt8(truncatingIfNeeded: bitLength >> UInt64(8 * index))
        }
        tail.withUnsafeBufferPointer { feedContiguous($0, compress) }
    }

    private mutating func feedContiguous(_ input: UnsafeBufferPointer<UInt8>, _ compress: (UnsafeBufferPointer<UInt8>) -> Void) {
        var start = 0
        if !pending.isEmpty {
            let take = min(Self.blockSize - pending.count, input.count)
            pending.append(contentsOf: input[0..<take])
            start = take
            guard pending.count == Self.blockSize else { return }
            pending.withUnsafeBufferPointer(compress)
            pending.removeAll(keepingCapacity: true)
        }
        while input.count - start >= Self.blockSize {
            compress(UnsafeBufferPointer(rebasing: input[start..<start + Self.blockSize]))
            start += Self.blockSize
        }
        pending.append(contentsOf: input[start...])
    }
}

/// A FIPS 180-4 hash's running value: its state words and the framing of the message.
/// SHA-1 and SHA-256 each keep one and hand it their block function.
struct HashChain: Sendable {
    typealias Compress = (inout [UInt32], UnsafeBufferPointer<UInt8>) -> Void

    private var state: [UInt32]
    private var framing = HashBlockFraming()

    /// A chain starting from the hash's initial value.
    init(initial: [UInt32]) { state = initial }

    /// Appends `bytes`, folding each completed block into the state.
    mutating func update<Bytes: Collection>(_ bytes: Bytes, _ compress: Compress) where Bytes.Element == UInt8 {
        var state = self.state
        framing.feed(bytes) { compress(&state, $0) }
        self.state = state
    }

    /// Pads the message, folds the last blocks and returns the digest; the chain is spent.
    mutating func finalize(_ compress: Compress) -> [UInt8] {
        var state = self.state
        framing.finish { compress(&state, $0) }
        self.state = state
        return bigEndianBytes(state)
    }
}

/// Big-endian bytes of `words`, the digest of a FIPS 180-4 hash.
func bigEndianBytes(_ words: [UInt32]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(words.count * 4)
    for word in words {
        out += [UInt8(truncatingIfNeeded: word >> 24), UInt8(truncatingIfNeeded: word >> 16),
                UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word)]
    }
    return out
}

/// The 32-bit big-endian word at `offset` of a block.
@inline(__always)
func bigEndianWord(_ block: UnsafeBufferPointer<UInt8>, _ offset: Int) -> UInt32 {
    UInt32(block[offset]) << 24 | UInt32(block[offset + 1]) << 16 | UInt32(block[offset + 2]) << 8 | UInt32(block[offset + 3])
}
