import Glibc
import Testing
@testable import LiveNet

@Suite("Syscall")
struct SyscallTests {
    @Test("EINTR is retried until the call completes")
    func retriesEINTR() throws {
        var calls = 0
        let result = try Syscall.run("fake") { () -> Int in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == .done(7))
        #expect(calls == 3)
    }

    @Test("EAGAIN on an empty non-blocking pipe is .wouldBlock, not an error")
    func eagainIsWouldBlock() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 1)
        defer { buffer.deallocate() }
        #expect(try Syscall.read(ends[0], into: buffer) == .wouldBlock)

        var byte: UInt8 = 42
        #expect(write(ends[1], &byte, 1) == 1)
        #expect(try Syscall.read(ends[0], into: buffer) == .done(1))
        #expect(buffer[0] == 42)
    }

    @Test("a failure throws NetError naming the call, the errno and its text")
    func failureNamesCallAndErrno() throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 1)
        defer { buffer.deallocate() }
        #expect(throws: NetError.syscall(call: "read", errno: EBADF)) {
            try Syscall.read(-1, into: buffer)
        }
        let error = NetError.syscall(call: "read", errno: EBADF)
        #expect(error.description == "read failed: Bad file descriptor (errno 9)")
        #expect(error.errno == EBADF)
        #expect(throws: NetError.syscall(call: "close", errno: EBADF)) { try Syscall.close(-1) }
    }

    @Test("must() reports EAGAIN as a failure of a call that cannot block")
    func mustTreatsEAGAINAsFailure() throws {
        #expect(throws: NetError.syscall(call: "fake", errno: EAGAIN)) {
            try Syscall.must("fake") { () -> Int in
                errno = EAGAIN
                return -1
            }
        }
    }

    @Test("addresses resolve and print as host:port")
    func addresses() throws {
        let v4 = try SocketAddress.resolve(host: "127.0.0.1", port: 1935)
        #expect(v4.description == "127.0.0.1:1935")
        #expect(v4.port == 1935)
        #expect(throws: NetError.self) { try SocketAddress.resolve(host: "no such host.invalid", port: 1) }
    }
}
