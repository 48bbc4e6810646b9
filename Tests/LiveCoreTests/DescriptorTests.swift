import Foundation
import Glibc
import Testing
@testable import LiveCore

@Suite("Descriptor")
struct DescriptorTests {
    @Test("a non-blocking pipe that fills up: writeAll waits for the reader and every byte arrives in order")
    func waitsOutAFullPipe() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let writer = fds[1]
        try #require(fcntl(writer, F_SETFL, fcntl(writer, F_GETFL) | O_NONBLOCK) == 0)
        // Four times what a pipe holds by default, read slowly on another thread.
        let bytes = (0..<(256 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        final class Received: @unchecked Sendable { var data: [UInt8] = [] }  // written by the reader, read after it ends
        let received = Received()
        let done = DispatchSemaphore(value: 0)
        let reader = fds[0]
        Thread.detachNewThread {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                usleep(200)
                let n = read(reader, &chunk, chunk.count)
                if n <= 0 { break }
                received.data += chunk[0..<n]
            }
            done.signal()
        }
        let result = bytes.withUnsafeBytes { Descriptor.writeAll(writer, $0) }
        close(writer)
        done.wait()
        #expect(result == 0)
        #expect(received.data == bytes)
    }

    @Test("a descriptor that is not open: the errno comes back, no crash")
    func badDescriptor() {
        let result = [UInt8](repeating: 1, count: 16).withUnsafeBytes { Descriptor.writeAll(-1, $0) }
        #expect(result == EBADF)
    }

    @Test("nothing to write is done at once")
    func empty() {
        #expect([UInt8]().withUnsafeBytes { Descriptor.writeAll(-1, $0) } == 0)
    }
}
