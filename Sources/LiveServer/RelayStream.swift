import Foundation
import LiveCore
import LiveNet
import LiveRTMP
import Synchronization

/// A publisher's side of a relayed stream, as the stream sees it.
protocol RelayPublisher: AnyObject, Sendable {
    /// The loop the publisher's connection lives on.
    var loop: EventLoop { get }
    /// Another publisher took the stream over: close. Called on `loop`.
    func replaced()
}

/// A player's side of a relayed stream, as the stream sees it.
protocol RelayPlayer: AnyObject, Sendable {
    var loop: EventLoop { get }
    /// Sends (or drops) live messages, oldest first. Called on `loop`.
    func deliver(_ messages: ArraySlice<RelayMessage>, from stream: RelayStream)
    /// Messages of `stream` never reached this player (its loop fell too far behind):
    /// it must wait for a keyframe and take the headers again. Called on `loop`.
    func lostMessages(of stream: RelayStream)
    /// The publisher unpublished on purpose. Called on `loop`.
    func streamUnpublished(_ stream: RelayStream)
    /// How the player is reached (listed per player by `/api/streams`).
    var transport: PlayerTransport { get }
}

extension RelayPlayer {
    var transport: PlayerTransport { .rtmp }
}

/// One relayed stream: at most one publisher, any number of players, the GOP cache,
/// the stream's timeline and its statistics.
///
/// Fan-out: each message is encoded once (`RelayMessage`) and handed to every player;
/// players on the publisher's loop get it at once (or after the merge wait below), the
/// players of each other loop through that group's pending list and one flush task at a
/// time, so a player's bytes are only ever queued on its own loop thread and a loop that
/// falls behind never holds more than `maxPendingMessages` of a stream (beyond that its
/// players lose them and resume at the next keyframe). A player joining gets the GOP
/// cache's replay under the same lock that adds it, so it sees every message exactly
/// once, in order.
///
/// Timestamps are rebased per stream, not per player, so the one encoding stays valid
/// for everyone: the first publisher's timestamps pass unchanged; a later publisher
/// (a restart or takeover) is shifted to continue 10 ms after the last relayed
/// timestamp, so players that stay see a timeline that never goes back. A player that
/// joins mid-stream starts at the cached keyframe's timestamp, which players accept
/// (ffmpeg, Flash and LiveLine's guest take the first timestamp as their origin).
///
/// Thread-safe: what changes is in one Mutex.
final class RelayStream: Sendable {
    /// The result of asking to publish.
    enum Claim {
        case accepted(replaced: RelayPublisher?)
        case refused(holder: String)
    }

    struct PlayerSlot {
        let player: RelayPlayer
        let address: String
        let counters: PlayerCounters
        /// The newest message (by `sequence`) its join replay already covered.
        let joinedAfter: UInt64
    }

    /// The players on one loop, and the messages waiting for their merged write.
    private struct PlayerGroup {
        let loop: EventLoop
        var slots: [PlayerSlot]
        /// Messages waiting for the merged write, with consecutive sequence numbers
        /// from `firstPending`.
        var pending: [RelayMessage] = []
        var firstPending: UInt64 = 0
        var flushArmed = false
        /// Messages were dropped before reaching these players (see `lostMessages`).
        var lost = false

        init(loop: EventLoop, slots: [PlayerSlot]) {
            self.loop = loop
            self.slots = slots
        }
    }

    private struct PublisherSlot {
        let publisher: RelayPublisher
        let address: String
        /// The publish URL's query: not used to decide takeovers, only reported
        /// (`livePublisher`; the line checks a hoster's `lineKey=` with it).
        let query: String?
        var lastActivityMicros: UInt64
        let startedMicros: UInt64
    }

    let key: StreamKey
    let chunkSize: Int
    /// Merged writes (SRS's "mw"): on a loop with many players, messages wait and then
    /// leave together, one writev per player for all of them instead of one per
    /// message; the kernel's per-send cost, not the bytes, dominates a large fan-out.
    /// The wait is `mergeMicrosPerPlayer` per player on that loop, at most
    /// `maxMergeMicros`, none under 1 ms: a co-host line or a handful of guests get
    /// every message at once, 1000 viewers on a loop get them in 100 ms batches.
    let maxMergeMicros: UInt64
    static let mergeMicrosPerPlayer: UInt64 = 100
    /// Messages that may wait for one loop's flush (about 10 s of a 30 fps stream with
    /// sound); past it the loop is not keeping up and its players skip to a keyframe.
    static let maxPendingMessages = 1024
    let droppedFrames = Atomic<UInt64>(0)

    /// Everything that changes, behind one lock: the publisher's loop relays while players
    /// join and leave on theirs and the HTTP API reads the figures.
    private struct State {
        var publisher: PublisherSlot?
        var groups: [PlayerGroup] = []
        var playerCount = 0
        var gop: GOPCache
        /// Bytes of `gop` charged to `gopLimits.sharedBudget`.
        var gopCharged = 0
        var scratch: [UInt8] = []
        /// Messages relayed so far (numbers pending messages against joins).
        var sequence: UInt64 = 0
        // Timeline.
        var offset: UInt32 = 0
        var newestTimestamp: UInt32?
        var rebaseNext = false
        // Statistics.
        var metadata: RTMPStreamMetadata?
        var codecID: UInt8?
        var frames: UInt64 = 0
        var windowStartMicros: UInt64 = 0
        var windowBytes = 0
        var windowAudioBytes = 0
        var windowFrames = 0
        var measuredBitrate = 0
        var measuredAudioBitrate = 0
        /// The first byte of the newest audio message (FLV AUDIODATA's format, rate and
        /// channel bits), nil before any audio; and the newest AAC sequence header.
        var audioTagByte: UInt8?
        var aacHeader: [UInt8]?
        var measuredFPS = 0.0

        init(gop: GOPCache) { self.gop = gop }

        /// Brings the server-wide GOP budget in line with what the cache holds (a reset by a
        /// new publisher is given back here at its first message); when the budget is spent,
        /// this stream's GOP is dropped to the headers and the refusal counted.
        mutating func chargeGOP() {
            guard let budget = gop.limits.sharedBudget else { return }
            let held = gop.byteCount
            if held < gopCharged {
                budget.refund(gopCharged - held)
            } else if held > gopCharged, !budget.charge(held - gopCharged) {
                gop.dropToHeaders()
                budget.refund(gopCharged)
                gopCharged = 0
                return
            }
            gopCharged = held
        }

        mutating func account(_ message: RelayMessage, nowMicros: UInt64) {
            switch message.kind {
            case .metadata:
                if case .data(let data)? = try? RTMPMessage(decoding: message.raw) { metadata = data.metadata }
            case .videoHeader, .keyframe, .interframe:
                codecID = message.raw.payload.first.map { $0 & 0x0F }
            case .audioHeader, .audio:
                guard let first = message.raw.payload.first else { break }
                audioTagByte = first
                windowAudioBytes += message.payloadCount
                // A header may be as large as any message: keep only what the format reader reads.
                if message.kind == .audioHeader { aacHeader = Array(message.raw.payload.prefix(2 + StreamAudioFormat.maxConfigBytes)) }
            }
            if message.kind.isVideoFrame {
                frames += 1
                windowFrames += 1
            }
            windowBytes += message.payloadCount
            let elapsed = nowMicros &- windowStartMicros
            if elapsed >= 1_000_000 {
                measuredBitrate = Int(Double(windowBytes) * 8 * 1_000_000 / Double(elapsed))
                measuredAudioBitrate = Int(Double(windowAudioBytes) * 8 * 1_000_000 / Double(elapsed))
                measuredFPS = Double(windowFrames) * 1_000_000 / Double(elapsed)
                windowStartMicros = nowMicros
                windowBytes = 0
                windowAudioBytes = 0
                windowFrames = 0
            }
        }
    }

    private let state: Mutex<State>

    init(key: StreamKey, chunkSize: Int, gopLimits: GOPCache.Limits, maxMergeMicros: UInt64 = 100_000) {
        self.key = key
        self.chunkSize = chunkSize
        self.maxMergeMicros = maxMergeMicros
        state = Mutex(State(gop: GOPCache(limits: gopLimits)))
    }

    deinit {
        state.withLock { $0.gop.limits.sharedBudget?.refund($0.gopCharged) }
    }

    /// No publisher and no players: the registry may forget the stream.
    var isEmpty: Bool { state.withLock { s in s.publisher == nil && s.playerCount == 0 } }

    var hasPublisher: Bool { state.withLock { s in s.publisher != nil } }

    /// The live publisher and the query it published with, nil without one.
    var livePublisher: (publisher: RelayPublisher, query: String?)? { state.withLock { s in s.publisher.map { ($0.publisher, $0.query) } } }

    // MARK: publishing

    /// The takeover rule (DESIGN.md §3, "unless it is the same authorised publisher
    /// coming back"). A publish of a live name is accepted, and the live publisher
    /// dropped, when
    /// - the new publisher is `authorized`: auth is on and its verified token grants
    ///   `publish` on this name (the returning hoster with a fresh token), or
    /// - the live publisher has sent nothing for `quietMicros` (its connection is dead
    ///   but not yet noticed: a live encoder sends many messages per second).
    /// Otherwise it is refused (NetStream.Publish.BadName). What the clients put in their
    /// query strings plays no part: two clients sending the same (or no) query are not
    /// the same publisher.
    static func allowsTakeover(authorized: Bool, liveLastActivityMicros: UInt64, nowMicros: UInt64,
                               quietMicros: UInt64) -> Bool {
        if authorized { return true }
        return nowMicros >= liveLastActivityMicros && nowMicros - liveLastActivityMicros > quietMicros
    }

    func claim(_ candidate: RelayPublisher, address: String, query: String? = nil, authorized: Bool, nowMicros: UInt64,
               quietMicros: UInt64) -> Claim {
        state.withLock { s in
            var replaced: RelayPublisher?
            if let live = s.publisher {
                guard live.publisher !== candidate,
                      Self.allowsTakeover(authorized: authorized, liveLastActivityMicros: live.lastActivityMicros,
                                          nowMicros: nowMicros, quietMicros: quietMicros)
                else { return .refused(holder: live.address) }
                replaced = live.publisher
            }
            if s.newestTimestamp != nil { s.rebaseNext = true }
            s.gop.reset()
            s.metadata = nil
            s.codecID = nil
            s.audioTagByte = nil
            s.aacHeader = nil
            s.frames = 0
            s.windowStartMicros = nowMicros
            s.windowBytes = 0
            s.windowAudioBytes = 0
            s.windowFrames = 0
            s.measuredBitrate = 0
            s.measuredAudioBitrate = 0
            s.measuredFPS = 0
            s.publisher = PublisherSlot(publisher: candidate, address: address, query: query,
                                        lastActivityMicros: nowMicros, startedMicros: nowMicros)
            return .accepted(replaced: replaced)
        }
    }

    /// Ends `source`'s publication (no-op when it was replaced). `notifyPlayers`: the
    /// publisher unpublished on purpose, so players get UnpublishNotify; a connection
    /// that merely dropped leaves players waiting for the publisher's return.
    func endPublishing(_ source: RelayPublisher, notifyPlayers: Bool) {
        let snapshot: [PlayerGroup]? = state.withLock { s in
            guard let live = s.publisher, live.publisher === source else { return nil }
            s.publisher = nil
            s.gop.reset()
            s.chargeGOP()
            s.measuredBitrate = 0
            s.measuredAudioBitrate = 0
            s.measuredFPS = 0
            return s.groups
        }
        guard notifyPlayers, let snapshot else { return }
        for group in snapshot {
            let slots = group.slots
            let loop = group.loop
            let told = loop.execute {
                // What is still waiting for a merged write goes out before the notice.
                self.flushGroup(on: loop)
                for slot in slots { slot.player.streamUnpublished(self) }
            }
            // Without the notice these players would take the next publisher's frames
            // as a continuation: make them start over at its keyframe instead.
            if !told { markLost(on: loop) }
        }
    }

    /// Relays one message from `source` (dropped unless it is the live publisher).
    /// Called on the publisher's loop.
    func relay(_ raw: RTMPRawMessage, kind: RelayMessage.Kind, from source: RelayPublisher, nowMicros: UInt64) throws {
        var message: RelayMessage?
        var arm: [(loop: EventLoop, micros: UInt64)] = []
        let snapshot: [PlayerGroup] = try state.withLock { s in
            guard var live = s.publisher, live.publisher === source else { return [] }
            live.lastActivityMicros = nowMicros
            s.publisher = live
            var rebased = raw
            if s.rebaseNext {
                s.rebaseNext = false
                s.offset = (s.newestTimestamp ?? 0) &+ 10 &- raw.timestamp
            }
            rebased.timestamp = raw.timestamp &+ s.offset
            if let newest = s.newestTimestamp {
                if Int32(bitPattern: rebased.timestamp &- newest) > 0 { s.newestTimestamp = rebased.timestamp }
            } else {
                s.newestTimestamp = rebased.timestamp
            }
            let made = try RelayMessage(kind: kind, raw: rebased, chunkSize: chunkSize, scratch: &s.scratch)
            message = made
            s.sequence += 1
            s.gop.add(made)
            s.chargeGOP()
            s.account(made, nowMicros: nowMicros)
            var direct: [PlayerGroup] = []
            for index in s.groups.indices {
                let wait = min(maxMergeMicros, Self.mergeMicrosPerPlayer * UInt64(s.groups[index].slots.count))
                // Once messages wait, later ones queue behind them whatever the count.
                guard wait >= 1000 || !s.groups[index].pending.isEmpty || s.groups[index].loop !== source.loop else {
                    direct.append(s.groups[index])
                    continue
                }
                if s.groups[index].pending.count >= Self.maxPendingMessages {
                    s.groups[index].pending.removeAll()
                    s.groups[index].lost = true
                }
                if s.groups[index].pending.isEmpty { s.groups[index].firstPending = s.sequence }
                s.groups[index].pending.append(made)
                if !s.groups[index].flushArmed {
                    s.groups[index].flushArmed = true
                    arm.append((s.groups[index].loop, wait >= 1000 ? wait : 0))
                }
            }
            return direct
        }
        for (loop, micros) in arm { armFlush(on: loop, afterMicros: micros) }
        guard let message, !snapshot.isEmpty else { return }
        let one = [message][...]
        for group in snapshot {
            for slot in group.slots { slot.player.deliver(one, from: self) }
        }
    }

    /// Runs `flushGroup` on `loop` after `micros` (0: at its next iteration). One flush
    /// per group is armed at a time, so the task is never refused for a full queue; a
    /// loop that has shut down drops the group's pending messages.
    private func armFlush(on loop: EventLoop, afterMicros micros: UInt64) {
        let armed: Bool
        if micros == 0 {
            armed = loop.executeCoalesced { self.flushGroup(on: loop) }
        } else if loop.inEventLoop {
            loop.schedule(after: .microseconds(Int64(micros))) { self.flushGroup(on: loop) }
            armed = true
        } else {
            armed = loop.executeCoalesced {
                loop.schedule(after: .microseconds(Int64(micros))) { self.flushGroup(on: loop) }
            }
        }
        guard !armed else { return }
        state.withLock { s in
            guard let index = s.groups.firstIndex(where: { $0.loop === loop }) else { return }
            s.groups[index].pending.removeAll()
            s.groups[index].flushArmed = false
        }
    }

    /// Marks `loop`'s players as having lost messages; its next flush tells them.
    private func markLost(on loop: EventLoop) {
        let arm: Bool = state.withLock { s in
            guard let index = s.groups.firstIndex(where: { $0.loop === loop }) else { return false }
            s.groups[index].lost = true
            guard !s.groups[index].flushArmed else { return false }
            s.groups[index].flushArmed = true
            return true
        }
        if arm { armFlush(on: loop, afterMicros: 0) }
    }

    /// Delivers the messages waiting on `loop`'s players, in order, each player only
    /// those its join replay did not already hold. Called on `loop`.
    private func flushGroup(on loop: EventLoop) {
        let taken: (slots: [PlayerSlot], pending: [RelayMessage], first: UInt64, lost: Bool)? = state.withLock { s in
            guard let index = s.groups.firstIndex(where: { $0.loop === loop }) else { return nil }
            let pending = s.groups[index].pending
            let lost = s.groups[index].lost
            s.groups[index].pending.removeAll(keepingCapacity: true)
            s.groups[index].flushArmed = false
            s.groups[index].lost = false
            return (s.groups[index].slots, pending, s.groups[index].firstPending, lost)
        }
        guard let taken else { return }
        if taken.lost {
            for slot in taken.slots { slot.player.lostMessages(of: self) }
        }
        for slot in taken.slots {
            // What its join replay already held is skipped (sequences are consecutive).
            let skip = slot.joinedAfter >= taken.first ? Int(clamping: slot.joinedAfter - taken.first + 1) : 0
            guard skip < taken.pending.count else { continue }
            slot.player.deliver(taken.pending[skip...], from: self)
        }
    }

    // MARK: playing

    /// Adds a player; returns what it must be sent first (headers and the current GOP)
    /// and whether that starts at a keyframe. Called on the player's loop.
    func addPlayer(_ player: RelayPlayer, address: String, counters: PlayerCounters) -> (replay: [RelayMessage], startsAtKeyframe: Bool) {
        state.withLock { s in
            let slot = PlayerSlot(player: player, address: address, counters: counters, joinedAfter: s.sequence)
            if let index = s.groups.firstIndex(where: { $0.loop === player.loop }) {
                s.groups[index].slots.append(slot)
            } else {
                s.groups.append(PlayerGroup(loop: player.loop, slots: [slot]))
            }
            s.playerCount += 1
            return (s.gop.replay, s.gop.hasKeyframe)
        }
    }

    func removePlayer(_ player: RelayPlayer) {
        state.withLock { s in
            guard let index = s.groups.firstIndex(where: { $0.loop === player.loop }),
                  let at = s.groups[index].slots.firstIndex(where: { $0.player === player }) else { return }
            s.groups[index].slots.remove(at: at)
            s.playerCount -= 1
            if s.groups[index].slots.isEmpty { s.groups.remove(at: index) }
        }
    }

    /// The current metadata and sequence headers (a player that missed one while it
    /// was behind gets them again before its next keyframe).
    var headers: [RelayMessage] { state.withLock { s in s.gop.headers } }

    // MARK: statistics

    func stats(nowMicros: UInt64) -> StreamStats {
        state.withLock { s in
            // A stream that stopped sending has no rate, whatever the last window said.
            let fresh = nowMicros &- s.windowStartMicros < 2_000_000
            let players = s.groups.flatMap(\.slots).map { slot in
                StreamStats.Player(address: slot.address, transport: slot.player.transport,
                                   droppedFrames: slot.counters.droppedFrames.load(ordering: .relaxed),
                                   bytesOut: slot.counters.bytesOut.load(ordering: .relaxed),
                                   queuedBytes: slot.counters.queuedBytes.load(ordering: .relaxed),
                                   peakQueuedBytes: slot.counters.peakQueuedBytes.load(ordering: .relaxed))
            }
            let codec: String? = s.codecID.map { $0 == FLVVideoTag.CodecID.avc ? "h264" : "codec \($0)" }
            let audio = s.audioTagByte.map { StreamAudioFormat(tagByte: $0, aacHeader: s.aacHeader) }
            let live = s.publisher != nil && fresh
            return StreamStats(
                app: key.app, name: key.name, publisher: s.publisher?.address, codec: codec,
                width: s.metadata?.width.flatMap { Int(exactly: $0.rounded()) },
                height: s.metadata?.height.flatMap { Int(exactly: $0.rounded()) },
                fps: live ? (s.measuredFPS * 100).rounded() / 100 : 0,
                bitrate: live ? s.measuredBitrate : 0,
                audioCodec: audio?.codec, audioSampleRate: audio?.sampleRate, audioChannels: audio?.channels,
                audioBitrate: audio.map { _ in live ? s.measuredAudioBitrate : 0 },
                players: s.playerCount,
                droppedFrames: droppedFrames.load(ordering: .relaxed),
                frames: s.frames,
                publishedSeconds: s.publisher.map { Double(nowMicros &- $0.startedMicros) / 1_000_000 },
                cachedBytes: s.gop.byteCount,
                playerDetails: players)
        }
    }

    var playersNow: Int { state.withLock { s in s.playerCount } }
}
