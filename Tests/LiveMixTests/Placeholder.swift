import Testing
@testable import LiveMix

@Test func placeholderLiveMix() { #expect(Bool(true)) }
