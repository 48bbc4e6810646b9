/// An immutable byte buffer for the wire. One encoded message is built once and queued
/// on many connections (the relay's fan-out) without copying: write queues hold a
/// reference and point writev straight at the storage, which never moves or changes.
public final class SharedBytes: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: the storage is written only inside init and read-only afterwards.
    public let count: Int
    let base: UnsafeMutableRawPointer

    /// Allocates `count` bytes and lets `fill` write them once.
    public init(count: Int, fill: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        self.count = count
        base = .allocate(byteCount: max(count, 1), alignment: 16)
        do {
            try fill(UnsafeMutableRawBufferPointer(start: base, count: count))
        } catch {
            base.deallocate()
            throw error
        }
    }

    /// Copies `bytes`.
    public convenience init<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        self.init(count: bytes.count) { target in
            if bytes.withContiguousStorageIfAvailable({ target.copyMemory(from: UnsafeRawBufferPointer($0)) }) == nil {
                _ = target.initializeMemory(as: UInt8.self, from: bytes)
            }
        }
    }

    /// The UTF-8 bytes of `text`.
    public convenience init(_ text: String) {
        self.init(Array(text.utf8))
    }

    deinit { base.deallocate() }

    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    public subscript(index: Int) -> UInt8 {
        precondition(index >= 0 && index < count, "index \(index) out of 0..<\(count)")
        return base.load(fromByteOffset: index, as: UInt8.self)
    }

    /// A copy of the bytes as an array.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    public var description: String { "SharedBytes(\(count) bytes)" }
}
