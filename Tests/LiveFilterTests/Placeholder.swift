import Testing
@testable import LiveFilter

@Test func placeholderLiveFilterTests() { #expect(Bool(true)) }
