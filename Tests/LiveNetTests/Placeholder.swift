import Testing
@testable import LiveNet

@Test func placeholderLiveNet() { #expect(Bool(true)) }
