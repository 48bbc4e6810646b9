import Testing
@testable import LiveCapture

@Test func placeholderLiveCaptureTests() { #expect(Bool(true)) }
