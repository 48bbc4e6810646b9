import LiveCore

/// Samples waiting to be cut into fixed blocks (a decoder's 1024-sample frames or a
/// device's periods into 10 ms): planar, one array per channel. Confined to its source's thread.
struct AudioBlockBuffer {
    let channelCount: Int
    private var channels: [[Float]]
    private var offset = 0

    init(channelCount: Int) {
        self.channelCount = channelCount
        channels = Array(repeating: [], count: channelCount)
    }

    /// Samples per channel waiting.
    var count: Int { channels[0].count - offset }

    mutating func append(_ frame: AudioFrame) {
        precondition(frame.channelCount == channelCount, "a frame of \(frame.channelCount) channels into \(channelCount)")
        compact()
        for channel in 0..<channelCount { channels[channel] += frame.channel(channel) }
    }

    mutating func appendSilence(_ count: Int) {
        guard count > 0 else { return }
        compact()
        for channel in 0..<channelCount { channels[channel] += repeatElement(0, count: count) }
    }

    /// The first `count` samples of each channel, planar, removed from the buffer.
    mutating func take(_ count: Int) -> [Float] {
        precondition(count <= self.count, "taking more samples than are buffered")
        var samples: [Float] = []
        samples.reserveCapacity(count * channelCount)
        for channel in 0..<channelCount { samples += channels[channel][offset..<offset + count] }
        offset += count
        return samples
    }

    /// Drops what was taken once it is most of the storage, so appends stay cheap.
    private mutating func compact() {
        guard offset > 0, offset >= count else { return }
        for channel in 0..<channelCount { channels[channel].removeFirst(offset) }
        offset = 0
    }
}
