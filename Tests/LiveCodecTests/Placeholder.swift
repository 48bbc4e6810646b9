import Testing
@testable import LiveCodec

@Test func placeholderLiveCodecTests() { #expect(Bool(true)) }
