import Testing
@testable import LiveServer

@Test func placeholderLiveServer() { #expect(Bool(true)) }
