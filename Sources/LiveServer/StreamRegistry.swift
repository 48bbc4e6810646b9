import LiveCore
import Synchronization

/// The relay's streams by name (`StreamKey`): one publisher each, players that may
/// arrive before it (they wait) and stay across a publisher's restart. A stream is
/// forgotten once it has neither publisher nor players.
///
/// Thread-safe: the table is in a Mutex (taken before a stream's own lock, never after).
final class StreamRegistry: Sendable {
    let chunkSize: Int
    let gopLimits: GOPCache.Limits
    /// How long a live publisher must have been silent for another to take over.
    let takeoverQuietMicros: UInt64
    private let streams = Mutex<[StreamKey: RelayStream]>([:])

    init(chunkSize: Int, gopLimits: GOPCache.Limits, takeoverQuietMicros: UInt64) {
        self.chunkSize = chunkSize
        self.gopLimits = gopLimits
        self.takeoverQuietMicros = takeoverQuietMicros
    }

    /// Adds a player to `key`'s stream, created when absent (the player then waits for
    /// the publisher); returns the stream and what the player must be sent first.
    func join(_ key: StreamKey, player: RelayPlayer, address: String, counters: PlayerCounters)
        -> (stream: RelayStream, replay: [RelayMessage], startsAtKeyframe: Bool)
    {
        streams.withLock { streams in
            let stream = streams[key] ?? RelayStream(key: key, chunkSize: chunkSize, gopLimits: gopLimits)
            streams[key] = stream
            let (replay, startsAtKeyframe) = stream.addPlayer(player, address: address, counters: counters)
            return (stream, replay, startsAtKeyframe)
        }
    }

    /// Asks to publish `key`; `authorized`: auth is on and the publisher's verified token
    /// grants publishing `key` (see `RelayStream.allowsTakeover` for when a live name is
    /// taken over rather than refused).
    func claim(_ key: StreamKey, by publisher: RelayPublisher, address: String, query: String? = nil, authorized: Bool)
        -> (RelayStream, RelayStream.Claim)
    {
        streams.withLock { streams in
            let stream = streams[key] ?? RelayStream(key: key, chunkSize: chunkSize, gopLimits: gopLimits)
            let claim = stream.claim(publisher, address: address, query: query, authorized: authorized,
                                     nowMicros: Clock.monotonicMicros(), quietMicros: takeoverQuietMicros)
            if case .accepted = claim { streams[key] = stream }
            return (stream, claim)
        }
    }

    /// The stream of `key`, if it exists.
    func stream(_ key: StreamKey) -> RelayStream? {
        streams.withLock { $0[key] }
    }

    /// Forgets `stream` if nobody publishes or plays it any more.
    func removeIfEmpty(_ stream: RelayStream) {
        streams.withLock { streams in
            if streams[stream.key] === stream, stream.isEmpty { streams[stream.key] = nil }
        }
    }

    /// Every stream, sorted by name.
    var all: [RelayStream] {
        streams.withLock { streams in
            streams.values.sorted { ($0.key.app, $0.key.name) < ($1.key.app, $1.key.name) }
        }
    }
}
