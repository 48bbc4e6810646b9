import Testing
@testable import LiveRTMP

@Test func placeholderLiveRTMP() { #expect(Bool(true)) }
