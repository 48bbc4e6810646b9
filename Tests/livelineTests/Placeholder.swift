import Testing
@testable import LiveLine

@Test func placeholderlivelineTests() { #expect(Bool(true)) }
