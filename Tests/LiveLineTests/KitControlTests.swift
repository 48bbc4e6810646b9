import LiveLine
import Testing

@Suite("reconnect backoff, bitrate steps and the guest's skip decision (pure)")
struct KitControlTests {
    @Test("the backoff is 2 s × 1.5^n capped at 30 s, jitter within ±20 %, then nil after the tries")
    func backoffSchedule() {
        let backoff = ReconnectBackoff(maxTries: 10)
        #expect(backoff.schedule() == [2, 3, 4.5, 6.75, 10.125, 15.1875, 22.78125, 30, 30, 30])
        #expect(backoff.delay(attempt: 0, unit: 0) == 1.6)
        #expect(backoff.delay(attempt: 0, unit: 1) == 2.4)
        #expect(backoff.delay(attempt: 9, unit: 1) == 30)
        #expect(backoff.delay(attempt: 10, unit: 0.5) == nil)
        #expect(ReconnectBackoff(maxTries: 0).delay(attempt: 0, unit: 0.5) == nil)
        var generator = SystemRandomNumberGenerator()
        for n in 0..<10 {
            let delay = backoff.delay(attempt: n, using: &generator) ?? -1
            let nominal = backoff.schedule()[n]
            #expect(delay >= nominal * 0.8 - 1e-9 && delay <= min(30, nominal * 1.2) + 1e-9)
        }
    }

    @Test("the bitrate steps down on a long queue or drops, to the carried rate, and climbs back in steps")
    func bitrateSteps() {
        var controller = BitrateController(settings: .init(minKbps: 200, maxKbps: 2500), startKbps: 2500)
        let congested = BitrateController.Sample(queuedMilliseconds: 900, droppedFrames: 3, sendBytesPerSecond: 0)
        #expect(controller.update(congested) == 1750)
        #expect(controller.update(congested) == 1225)
        // The link carried 100 kB/s = 800 kbit/s: go to 85 % of that.
        #expect(controller.update(.init(queuedMilliseconds: 600, droppedFrames: 0, sendBytesPerSecond: 100_000)) == 680)
        let calm = BitrateController.Sample(queuedMilliseconds: 20, droppedFrames: 0, sendBytesPerSecond: 85_000)
        for _ in 0..<4 { #expect(controller.update(calm) == nil) }
        #expect(controller.update(calm) == 748)
        for _ in 0..<200 { controller.update(congested) }
        #expect(controller.targetKbps == 200)
        for _ in 0..<500 { controller.update(calm) }
        #expect(controller.targetKbps == 2500)
        // A queue between the thresholds holds the rate and restarts the count.
        var held = BitrateController(settings: .init(minKbps: 200, maxKbps: 2500), startKbps: 1000)
        for _ in 0..<4 { held.update(calm) }
        #expect(held.update(.init(queuedMilliseconds: 200, droppedFrames: 0, sendBytesPerSecond: 0)) == nil)
        for _ in 0..<4 { #expect(held.update(calm) == nil) }
        #expect(held.update(calm) == 1100)
    }

    private func packets(_ count: Int, keyframes: Set<Int>, stepMs: Int64 = 33) -> [GuestLatencyControl.Packet] {
        (0..<count).map { GuestLatencyControl.Packet(dtsMilliseconds: Int64($0) * stepMs, isKeyframe: keyframes.contains($0)) }
    }

    @Test("the guest keeps a buffer within target + tolerance, and otherwise drops to the latest keyframe and decodes the rest silently down to the target")
    func skipDecision() {
        let control = GuestLatencyControl(targetMilliseconds: 150, toleranceMilliseconds: 100)
        #expect(control.plan([]) == .none)
        #expect(control.plan(packets(8, keyframes: [0])) == .none)  // 231 ms
        // A 2 s burst with keyframes at 0 and 30 (1 s apart, 33 ms a frame): drop the 30
        // before the latest keyframe, then decode silently until 150 ms from the newest.
        let burst = packets(61, keyframes: [0, 30])
        let plan = control.plan(burst)
        #expect(plan.drop == 30)
        let firstShown = burst[plan.drop + plan.decodeSilently]
        #expect(burst.last!.dtsMilliseconds - firstShown.dtsMilliseconds <= 150)
        #expect(burst.last!.dtsMilliseconds - burst[plan.drop + plan.decodeSilently - 1].dtsMilliseconds > 150)
        // No keyframe in the buffer: nothing dropped (it would break the picture), all decoded.
        let noKey = control.plan(packets(61, keyframes: []))
        #expect(noKey.drop == 0 && noKey.decodeSilently == 56)
        // The latest keyframe is the newest packet: everything before it goes, it is shown.
        #expect(control.plan(packets(20, keyframes: [19])) == GuestLatencyControl.Plan(drop: 19, decodeSilently: 0))
    }
}
