import Testing
@testable import LiveCore

@Test func placeholderLiveCoreTests() { #expect(Bool(true)) }
