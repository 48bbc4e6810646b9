import Testing
@testable import LiveLine

@Test func placeholderLiveLineTests() { #expect(Bool(true)) }
