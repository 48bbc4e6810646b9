import LiveLine
import Testing

/// The adaptive bitrate as a pure state machine: synthetic samples of (time, send queue
/// in ms of media, throughput), by hand or from a simulated link whose capacity steps.
@Suite("adaptive bitrate: cut on a queue, careful probes, a reconnect is not congestion (pure)")
struct BitrateControllerTests {
    private static let settings = BitrateController.Settings(minKbps: 200, maxKbps: 2500)

    /// One sample by hand: time (ms), queue (ms), throughput (kbit/s; `recent`: over the
    /// last quarter second), congestion drops.
    private struct Row {
        let time: Int64, queue: Int, kbps: Int, recent: Int?, drops: Int, expected: Int
        init(_ time: Int64, _ queue: Int, _ kbps: Int, recent: Int? = nil, drops: Int = 0, _ expected: Int) {
            (self.time, self.queue, self.kbps, self.recent, self.drops, self.expected) = (time, queue, kbps, recent, drops, expected)
        }

        var sample: BitrateController.Sample {
            .init(timeMilliseconds: time, queuedMilliseconds: queue, droppedFrames: drops, sendBytesPerSecond: Double(kbps) * 1000 / 8,
                  recentBytesPerSecond: recent.map { Double($0) * 1000 / 8 })
        }
    }

    private func run(_ controller: inout BitrateController, _ rows: [Row], sourceLocation: SourceLocation = #_sourceLocation) {
        for row in rows {
            controller.update(row.sample)
            #expect(controller.targetKbps == row.expected, "at \(row.time) ms (queue \(row.queue) ms, \(row.kbps) kbit/s)",
                    sourceLocation: sourceLocation)
        }
    }

    @Test("the rules, sample by sample: a long queue (from its floor) confirmed for 200 ms cuts to 0.85 × the throughput, a draining queue is left alone, a queue between the levels holds, calm seconds step up")
    func rules() {
        var controller = BitrateController(settings: Self.settings, startKbps: 2500)
        // The floor is 20 ms (the round trip): the levels apply to the queue above it.
        run(&controller, [
            Row(0, 20, 2500, 2500),
            Row(250, 350, 1200, 2500),  // above the high level once: a keyframe's burst, maybe
            Row(500, 200, 1200, 2500),  // it drained: nothing
            Row(750, 350, 1000, 2500),
            Row(1000, 450, 1000, 850),  // above it for 200 ms or more: cut to 0.85 × 1000
            Row(1250, 500, 1000, 850),  // held: too soon after the cut
            Row(2250, 300, 1000, 850),  // after the hold, a third shorter than at the cut: draining
            Row(2500, 150, 1000, 850),  // between the levels: hold
            Row(2750, 50, 1000, 850),   // calm from here…
            Row(3500, 50, 900, 850),
            Row(3750, 50, 900, 850),    // …for a second, but the cut went to 0.85 × the 1000 kbit/s the link carried: no step
            Row(4000, 125, 1000, 850),  // the queue starts to grow: hold, the calm second starts over
            Row(4250, 60, 1000, 850),
            Row(5250, 60, 1000, 1150),  // 3 s after the cut and a calm second: a small probe, 15 % past the link's rate
            Row(5750, 60, 1100, 1150),  // more carried half a second after it: too soon to tell
            Row(6250, 60, 1100, 1495),  // carried (≥ 1.03 ×), calm a second after the probe: its rate is noted, the next goes 2 × further (30 %), at once
            Row(7250, 60, 1100, 1495),  // the link carries no more than before: watched, not good yet
        ])
        #expect(controller.lastGoodKbps == 1150)
        #expect(controller.linkRateKbps == 1150)
        // Twice the high level cuts at once; drops cut at once too.
        var fast = BitrateController(settings: Self.settings, startKbps: 2000)
        run(&fast, [Row(0, 800, 1500, 1275), Row(1500, 100, 1500, 1275), Row(1750, 200, 1500, drops: 3, 1147)])
        // A stall (the link carried next to nothing) is no measure of the link: 0.7 × the target.
        var stalled = BitrateController(settings: Self.settings, startKbps: 2000)
        run(&stalled, [Row(0, 900, 100, 1400)])
        // A burst while the link carries more than the target: a gentle 0.9 ×, never up.
        var burst = BitrateController(settings: Self.settings, startKbps: 1000)
        run(&burst, [Row(0, 900, 3000, 900)])
        // Never below the minimum, never above the maximum.
        var floor = BitrateController(settings: Self.settings, startKbps: 250)
        run(&floor, [Row(0, 900, 50, 200)])
        var ceiling = BitrateController(settings: Self.settings, startKbps: 2450)
        run(&ceiling, [Row(0, 10, 2500, 2450), Row(1000, 10, 2500, 2500), Row(2000, 10, 2500, 2500)])
    }

    @Test("a step after which the queue grows at two samples in a row is taken back at once, and the next waits 2 s")
    func probeTakenBack() {
        var controller = BitrateController(settings: Self.settings, startKbps: 1000)
        run(&controller, [
            Row(0, 20, 1000, 1000),
            Row(1000, 20, 1000, 1250),  // a calm second: a step
            Row(1250, 60, 1000, 1250),  // the queue grows once: a keyframe, maybe
            Row(1500, 100, 1000, 1000), // and again: the step went past the link, back to the rate before
            Row(1750, 40, 1000, 1000),
            Row(2750, 20, 1000, 1000),  // calm, but the next step waits
            Row(3750, 20, 1000, 1250),
            // Calm, but the encoder has not caught up with the step (under 80 % of it): no next step yet.
            Row(4750, 20, 900, 1250),
            Row(5750, 20, 1100, 1500),
        ])
    }

    /// A cut where the link carried 1000 kbit/s, then, 3 s later and calm, a probe 15 % past it.
    private static let probePastTheLink = [
        Row(0, 20, 2500, 2500),
        Row(250, 700, 1000, 850),   // cut: the link carried 1000 kbit/s
        Row(1250, 20, 1000, 850),
        Row(3250, 20, 1000, 1150),  // 3 s after the cut, calm: a probe 15 % past the link
    ]

    @Test("a probe past the link's rate is watched until the link carries it: an encoder slow to reach it does not make it good")
    func pastProbeWatchedUntilCarried() {
        var controller = BitrateController(settings: Self.settings, startKbps: 2500)
        run(&controller, Self.probePastTheLink + [
            Row(4250, 20, 880, 1150),   // the encoder is slow to reach it: calm, the link carries no more
            Row(5250, 20, 950, 1150),
            Row(6250, 20, 1000, 1150),  // past the 2 s watch of a plain step, still not carried; no second probe
            Row(6500, 60, 1000, 1150),  // now the queue grows, twice: taken back, to the rate the link did carry
            Row(6750, 100, 1000, 850),
        ])
        #expect(controller.lastGoodKbps == 850)
    }

    @Test("a cut right after a drop goes to what the link carries now (its last quarter second), not the last second's average that still holds the faster time before the drop")
    func cutReadsTheLinkNow() {
        var controller = BitrateController(settings: Self.settings, startKbps: 2500)
        run(&controller, [Row(0, 20, 2500, 2500), Row(250, 600, 2000, recent: 1000, 850)])
        #expect(controller.linkRateKbps == 1000)
        // Without the quarter second's figure, the last second's.
        var older = BitrateController(settings: Self.settings, startKbps: 2500)
        run(&older, [Row(0, 20, 2500, 2500), Row(250, 600, 2000, 1700)])
    }

    @Test("a cut takes the least quarter-second reading of the last second with a backlog: one that read high (a bucket's burst as the link narrowed) does not set the rate")
    func cutTakesTheLeastRecentReading() {
        var controller = BitrateController(settings: Self.settings, startKbps: 2500)
        run(&controller, [
            Row(0, 20, 2500, 2500),
            Row(250, 300, 2300, recent: 1000, 2500),  // a backlog, not yet confirmed: the link carried 1000 over the quarter second
            Row(500, 450, 2000, recent: 1300, 850),   // confirmed, the quarter second now reading 1300 (a burst of acknowledgements)
        ])
        #expect(controller.linkRateKbps == 1000)
    }

    @Test("a backlog that a cut left standing (not a quarter shorter a second later) goes under the last second's throughput by its share of a second")
    func standingBacklogDrains() {
        var controller = BitrateController(settings: Self.settings, startKbps: 2500)
        run(&controller, [
            Row(0, 20, 2500, 2500),
            Row(250, 600, 1000, 850),   // 580 ms from the floor: cut at once to 0.85 × 1000
            Row(750, 560, 950, 850),    // held
            Row(1250, 520, 900, 450),   // a second on, 500 ms still wait: the link carries 900, the backlog is half a second of it
        ])
        #expect(controller.linkRateKbps == 900)
        #expect(controller.phase == .draining)
    }

    @Test("a probe after which the queue stands higher for 750 ms is taken back, however unevenly it grew")
    func standingQueueTakesBack() {
        var controller = BitrateController(settings: Self.settings, startKbps: 2500)
        run(&controller, Self.probePastTheLink + [
            Row(3500, 90, 1000, 1150),  // the queue grows once: a keyframe, maybe
            Row(3750, 80, 1000, 1150),  // and shrinks a little
            Row(4000, 130, 1000, 1150), // grows once again
            Row(4250, 120, 1000, 850),  // its lowest over 750 ms (80 ms) stands above the 20 ms at the probe: back
        ])
    }

    @Test("the sound's rate is taken off the throughput before the cut")
    func reservedForSound() {
        var settings = Self.settings
        settings.reservedKbps = 128
        var controller = BitrateController(settings: settings, startKbps: 2500)
        run(&controller, [Row(0, 900, 1128, 850)])
    }

    /// A link of stepping capacity fed by an encoder that makes exactly its target, with
    /// the publisher's bound: past 500 ms of queued media the backlog is dropped (to a
    /// keyframe) and the drop reported. One sample every 250 ms.
    private struct Link {
        var capacityKbps: (Int64) -> Int
        var controller: BitrateController
        /// Unsent media, oldest first: (kbit left, ms of media it carries, kbit it started with).
        var backlog: [(kbits: Double, milliseconds: Double, size: Double)] = []
        var carried: [Double] = []  // kbit per step, the last second's
        var targets: [(time: Int64, kbps: Int, queue: Int)] = []

        var queueMilliseconds: Int { Int(backlog.reduce(0) { $0 + $1.milliseconds * $1.kbits / $1.size }) }

        mutating func run(until end: Int64) {
            var time: Int64 = 0
            while time < end {
                time += 250
                let produced = Double(controller.targetKbps) / 4
                backlog.append((produced, 250, produced))
                var room = Double(capacityKbps(time)) / 4
                var sent = 0.0
                while room > 0, !backlog.isEmpty {
                    let take = min(room, backlog[0].kbits)
                    backlog[0].kbits -= take
                    room -= take
                    sent += take
                    if backlog[0].kbits <= 1e-9 { backlog.removeFirst() }
                }
                carried.append(sent)
                if carried.count > 4 { carried.removeFirst() }
                var drops = 0
                if queueMilliseconds > 500 {
                    backlog.removeAll()
                    drops = 1
                }
                let queue = queueMilliseconds
                controller.update(.init(timeMilliseconds: time, queuedMilliseconds: queue, droppedFrames: drops,
                                        sendBytesPerSecond: carried.reduce(0, +) / Double(carried.count) * 4 * 1000 / 8,
                                        recentBytesPerSecond: sent * 4 * 1000 / 8))
                targets.append((time, controller.targetKbps, queue))
            }
        }
    }

    /// 4 Mbit/s, then `dip` kbit/s from 10 s to 30 s, then 4 Mbit/s again.
    private static func dip(_ kbps: Int) -> (Int64) -> Int {
        { time in time > 10_000 && time <= 30_000 ? kbps : 4000 }
    }

    @Test("a capacity drop cuts below the capacity within 1 s, for dips to 1 Mbit/s, 600 kbit/s and 1.5 Mbit/s", arguments: [1000, 600, 1500])
    func capacityDrop(dipKbps: Int) throws {
        var link = Link(capacityKbps: Self.dip(dipKbps), controller: BitrateController(settings: Self.settings, startKbps: 2500))
        link.run(until: 30_000)
        let firstCut = try #require(link.targets.first { $0.kbps < 2500 })
        #expect(firstCut.time - 10_000 <= 1000, "first cut at \(firstCut.time) ms")
        let under = try #require(link.targets.first { $0.time > 10_000 && $0.kbps < dipKbps })
        #expect(under.time - 10_000 <= 1000, "under the capacity at \(under.time) ms: \(link.targets.map { ($0.time, $0.kbps, $0.queue) })")
        // Through the dip the queue drains and the rate settles near the capacity: no collapse.
        let late = link.targets.filter { $0.time > 20_000 && $0.time <= 30_000 }
        #expect(late.allSatisfy { $0.kbps >= dipKbps * 7 / 10 }, "\(late.map(\.kbps))")
        #expect(late.allSatisfy { $0.queue <= 400 }, "\(late.map { ($0.time, $0.kbps, $0.queue) })")
    }

    @Test("after the dip the rate probes back up, never overshooting into a backlog, back within 10 % of the start within 10 s: a small probe past the link's rate, then probes that grow while the link carries them")
    func recovery() throws {
        var link = Link(capacityKbps: Self.dip(1000), controller: BitrateController(settings: Self.settings, startKbps: 2500))
        link.run(until: 45_000)
        let after = link.targets.filter { $0.time > 30_000 }
        let back = try #require(after.first { $0.kbps >= 2250 }, "\(after.map(\.kbps))")
        #expect(back.time - 30_000 <= 10_000, "back at \(back.time) ms")
        // Steps one at a time, the first past the link small, none more than doubling the rate.
        let rises = zip(after, after.dropFirst()).filter { $1.kbps > $0.kbps }
        #expect(rises.allSatisfy { $1.kbps <= 2 * $0.kbps }, "\(rises.map { ($0.kbps, $1.kbps) })")
        let first = try #require(rises.first)
        #expect(first.1.kbps <= first.0.kbps * 14 / 10, "\(rises.map { ($0.kbps, $1.kbps) })")
        #expect(after.allSatisfy { $0.kbps <= 2500 && $0.queue < 100 }, "\(after.map { ($0.kbps, $0.queue) })")
        #expect(link.targets.last?.kbps == 2500)
    }

    @Test("through a long dip the rate stays under the link but for a small probe every 3 s or more: the queue stays short", arguments: [1000, 600])
    func longDipStaysUnder(dipKbps: Int) {
        var link = Link(capacityKbps: { $0 > 5000 && $0 <= 45_000 ? dipKbps : 4000 },
                        controller: BitrateController(settings: Self.settings, startKbps: 2500))
        link.run(until: 45_000)
        let dip = link.targets.filter { $0.time > 10_000 && $0.time <= 45_000 }
        #expect(dip.allSatisfy { $0.queue < 150 }, "\(dip.map { ($0.time, $0.kbps, $0.queue) })")
        let past = dip.filter { $0.kbps > dipKbps }
        // A probe past the link's rate goes at most 15 % past it, one at a time, 3 s apart.
        #expect(past.allSatisfy { $0.kbps <= dipKbps * 115 / 100 }, "\(past.map { ($0.time, $0.kbps) })")
        let starts = zip(dip, dip.dropFirst()).filter { $0.kbps <= dipKbps && $1.kbps > dipKbps }.map { $1.time }
        #expect(zip(starts, starts.dropFirst()).allSatisfy { $1 - $0 >= 3000 }, "\(starts)")
        #expect(dip.map(\.kbps).reduce(0, +) / dip.count >= dipKbps * 8 / 10)
    }

    @Test("on a link that stays narrow each failed probe past its rate goes half as far as the one before, down to 5 %")
    func failedProbesNarrow() {
        var link = Link(capacityKbps: { $0 > 5000 ? 1000 : 4000 }, controller: BitrateController(settings: Self.settings, startKbps: 2500))
        link.run(until: 45_000)
        let dip = link.targets.filter { $0.time > 6_000 }
        // The highest rate of each run of samples past the link's.
        var peaks: [Int] = []
        for (previous, sample) in zip(dip, dip.dropFirst()) where sample.kbps > 1000 {
            if previous.kbps <= 1000 { peaks.append(sample.kbps) } else { peaks[peaks.count - 1] = max(peaks[peaks.count - 1], sample.kbps) }
        }
        #expect(peaks.count >= 3, "\(peaks)")
        #expect(peaks.first.map { $0 <= 1150 } ?? false, "\(peaks)")
        #expect(zip(peaks, peaks.dropFirst()).allSatisfy { $1 <= $0 }, "\(peaks)")
        #expect(peaks.last.map { $0 <= 1050 } ?? false, "\(peaks)")
    }

    @Test("after a long narrow stretch (probes narrowed to 5 %) the capacity returns: the first carried probe sends the next at least 15 % past it again, and the rate is back within 3 s")
    func returnAfterNarrowProbes() {
        var link = Link(capacityKbps: { $0 > 5000 && $0 <= 45_000 ? 1000 : 4000 }, controller: BitrateController(settings: Self.settings, startKbps: 2500))
        link.run(until: 70_000)
        // The rates from the last one before the return on, each once.
        var rates: [Int] = []
        for sample in link.targets where sample.time >= 44_000 && rates.last != sample.kbps { rates.append(sample.kbps) }
        let steps = zip(rates, rates.dropFirst()).map { Double($1) / Double($0) }
        #expect(steps.count >= 2 && steps.dropFirst().allSatisfy { $0 >= 1.149 }, "\(rates)")
        let back = link.targets.first { $0.time > 45_000 && $0.kbps >= 2250 }
        #expect(back.map { $0.time - 45_000 <= 3_000 } ?? false, "\(rates)")
    }

    @Test("probing against a link just above the cut: the queue stays under the drop bound, the rate stays near the capacity")
    func probingWithoutOvershoot() {
        // 1.2 Mbit/s after the drop: probes find the backlog and are taken back before it grows.
        var link = Link(capacityKbps: { $0 > 5000 ? 1200 : 4000 }, controller: BitrateController(settings: Self.settings, startKbps: 2500))
        link.run(until: 60_000)
        let steady = link.targets.filter { $0.time > 15_000 }
        #expect(steady.allSatisfy { $0.queue < 500 }, "\(steady.map(\.queue))")
        #expect(steady.allSatisfy { $0.kbps >= 850 && $0.kbps <= 1500 }, "\(steady.map(\.kbps))")
        let average = steady.map(\.kbps).reduce(0, +) / steady.count
        #expect(average >= 900, "average \(average) kbit/s on a 1200 kbit/s link")
    }

    @Test("a reconnect (or a takeover of the name) is not congestion: the rate before the loss comes back, the stall before it is taken back, the first samples after it are ignored")
    func reconnectKeepsTheRate() {
        var controller = BitrateController(settings: Self.settings, startKbps: 2000)
        run(&controller, [Row(0, 20, 2000, 2000), Row(1000, 20, 2000, 2250)])
        #expect(controller.lastGoodKbps == 2000)
        // The server stops answering: the queue grows, nothing is carried: a cut…
        run(&controller, [Row(1250, 900, 0, 1575)])
        // …then the connection is lost: the cut is taken back, nothing counts until the reconnect.
        #expect(controller.connectionLost() == 2000)
        #expect(controller.phase == .offline)
        run(&controller, [Row(3000, 2000, 0, drops: 90, 2000), Row(7000, 5000, 0, drops: 150, 2000)])
        // Published again: the headers and an IDR in a burst, a rate meter from zero, ignored for 2 s.
        #expect(controller.reconnected(atMilliseconds: 8000) == nil)
        #expect(controller.phase == .settling)
        run(&controller, [Row(8250, 900, 150, drops: 30, 2000), Row(9750, 400, 300, 2000)])
        // Then the usual rules, from the same rate.
        run(&controller, [Row(10_000, 20, 2000, 2000), Row(11_000, 20, 2000, 2250)])
        // A takeover after a stall (the relay held the name; retries got BadName): the same path.
        run(&controller, [Row(11_250, 1000, 0, 1575)])
        controller.connectionLost()
        controller.connectionLost()  // a retry refused, again
        controller.reconnected(atMilliseconds: 20_000)
        #expect(controller.targetKbps == 2000)
    }

    @Test("a real capacity drop before a loss is kept: the last good rate is the one the queue was calm at")
    func lastGoodAfterRealDrop() {
        var controller = BitrateController(settings: Self.settings, startKbps: 2500)
        run(&controller, [Row(0, 20, 2500, 2500), Row(250, 700, 1000, 850), Row(1000, 50, 1000, 850), Row(2000, 50, 1000, 850)])
        #expect(controller.lastGoodKbps == 850)
        controller.connectionLost()
        controller.reconnected(atMilliseconds: 5000)
        #expect(controller.targetKbps == 850)
    }

    @Test("the kit's adaptive ceiling follows the stream's bitrate while it equals it, not once set apart")
    func kitCeilingFollowsBitrate() {
        var options = Hoster.Options()
        options.configuration.bitrateKbps = 300
        #expect(options.push.bitrate?.maxKbps == 300 && options.push.bitrate?.minKbps == 200)
        #expect(options.push.bitrate?.stepKbps == 30)
        options.configuration.bitrateKbps = 150
        #expect(options.push.bitrate?.maxKbps == 150 && options.push.bitrate?.minKbps == 150)
        options.push.bitrate?.maxKbps = 1000
        options.configuration.bitrateKbps = 400
        #expect(options.push.bitrate?.maxKbps == 1000)
    }
}
