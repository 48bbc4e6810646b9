import LiveLine
import Testing

@Suite("reconnect backoff and the guest's skip decision (pure)")
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
