import LiveNet
import Synchronization

/// Where a `RelayMessage` keeps its FLV framing: weakly, so the bytes live only while
/// some viewer's write queue holds them (what every viewer of a fan-out shares) and
/// never lengthen the life, nor the size, of the GOP cache; a viewer joining later
/// frames the message again.
struct FLVFramedCache {
    weak var buffer: SharedBytes?
}

extension RelayMessage {
    /// This message framed for FLV viewers (see `FLVFramedBytes`), made by the first
    /// viewer that needs it and shared while any write queue holds it; nil when no FLV
    /// tag carries it. Any thread.
    var flvFramed: FLVFramedBytes? {
        flvCache.withLock { cache in
            if let buffer = cache.buffer { return FLVFramedBytes(buffer: buffer) }
            guard let framed = FLVFramedBytes.tag(raw) else { return nil }
            cache.buffer = framed.buffer
            return framed
        }
    }
}
