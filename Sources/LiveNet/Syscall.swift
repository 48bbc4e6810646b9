import Glibc

/// The one place LiveNet calls into the kernel (swift-nio's habit): every call retries
/// EINTR, reports EAGAIN/EWOULDBLOCK as `.wouldBlock` rather than as an error, and
/// throws `NetError.syscall` carrying the call's name and errno.
enum Syscall {
    /// Runs `body` (a C call returning -1 and setting errno on failure) until it stops
    /// failing with EINTR.
    @inline(__always)
    static func run(_ call: String, _ body: () -> Int) throws(NetError) -> IOResult<Int> {
        while true {
            let result = body()
            if result >= 0 { return .done(result) }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            throw NetError.syscall(call: call, errno: code)
        }
    }

    /// For calls that cannot block (socket, bind, epoll_ctl...): EAGAIN there is a
    /// real failure, so it is thrown like any other errno.
    @inline(__always)
    static func must(_ call: String, _ body: () -> Int) throws(NetError) -> Int {
        switch try run(call, body) {
        case .done(let value): return value
        case .wouldBlock: throw NetError.syscall(call: call, errno: EAGAIN)
        }
    }

    // MARK: sockets

    static func socket(domain: Int32, type: Int32) throws(NetError) -> Int32 {
        let flags = Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        return Int32(try must("socket") { Int(Glibc.socket(domain, type | flags, 0)) })
    }

    static func setOption(_ fd: Int32, level: Int32, name: Int32, value: Int32, call: String) throws(NetError) {
        var value = value
        _ = try must(call) {
            Int(Glibc.setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)))
        }
    }

    static func socketError(_ fd: Int32) throws(NetError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = try must("getsockopt(SO_ERROR)") { Int(Glibc.getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length)) }
        return value
    }

    static func bind(_ fd: Int32, _ address: SocketAddress) throws(NetError) {
        _ = try must("bind") { address.withSockaddr { Int(Glibc.bind(fd, $0, $1)) } }
    }

    static func listen(_ fd: Int32, backlog: Int32) throws(NetError) {
        _ = try must("listen") { Int(Glibc.listen(fd, backlog)) }
    }

    /// A non-blocking connect: `.wouldBlock` means "in progress" (EINPROGRESS). EINTR
    /// is not retried here, because a second connect on the same socket would report
    /// EALREADY; the connection continues in the background just as with EINPROGRESS.
    static func connect(_ fd: Int32, _ address: SocketAddress) throws(NetError) -> IOResult<Void> {
        let result = address.withSockaddr { Glibc.connect(fd, $0, $1) }
        if result == 0 { return .done(()) }
        let code = errno
        if code == EINPROGRESS || code == EINTR || code == EAGAIN { return .wouldBlock }
        throw NetError.syscall(call: "connect", errno: code)
    }

    static func accept(_ fd: Int32) throws(NetError) -> IOResult<Int32> {
        let flags = Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        switch try run("accept4", { Int(GlibcExtensions.accept4(fd, nil, nil, flags)) }) {
        case .done(let client): return .done(Int32(client))
        case .wouldBlock: return .wouldBlock
        }
    }

    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(NetError) -> IOResult<Int> {
        try run("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// writev with MSG_NOSIGNAL: a peer that went away gives EPIPE, not a SIGPIPE that
    /// would kill the whole server.
    static func writev(_ fd: Int32, _ vectors: UnsafeMutablePointer<iovec>, count: Int) throws(NetError) -> IOResult<Int> {
        var message = msghdr()
        message.msg_iov = vectors
        message.msg_iovlen = count
        return try run("sendmsg") { Glibc.sendmsg(fd, &message, Int32(MSG_NOSIGNAL)) }
    }

    /// One non-blocking send (MSG_DONTWAIT, MSG_NOSIGNAL) of as much of `bytes` as the
    /// socket takes; for a last word before a close, where nothing waits for the rest.
    static func sendOnce(_ fd: Int32, _ bytes: [UInt8]) throws(NetError) -> IOResult<Int> {
        try run("send") {
            bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
        }
    }

    static func shutdownWrite(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// close is never retried: on Linux the descriptor is released even when close
    /// reports EINTR, and a retry could close a descriptor another thread just opened.
    static func close(_ fd: Int32) throws(NetError) {
        if Glibc.close(fd) == 0 { return }
        let code = errno
        if code == EINTR { return }
        throw NetError.syscall(call: "close", errno: code)
    }

    static func localAddress(_ fd: Int32) throws(NetError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try must("getsockname") {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Int(Glibc.getsockname(fd, $0, &length)) }
            }
        }
        return SocketAddress(storage: storage, length: length)
    }

    static func peerAddress(_ fd: Int32) throws(NetError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try must("getpeername") {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Int(Glibc.getpeername(fd, $0, &length)) }
            }
        }
        return SocketAddress(storage: storage, length: length)
    }

    // MARK: epoll and eventfd

    static func epollCreate() throws(NetError) -> Int32 {
        Int32(try must("epoll_create1") { Int(Epoll.create(Epoll.cloexec)) })
    }

    static func epollControl(_ epfd: Int32, _ op: Int32, _ fd: Int32, events: UInt32, id: UInt64) throws(NetError) {
        var slot: (UInt64, UInt64) = (0, 0)
        _ = try must("epoll_ctl") {
            withUnsafeMutableBytes(of: &slot) { raw in
                Epoll.store(events: events, id: id, at: raw.baseAddress!)
                return Int(Epoll.control(epfd, op, fd, raw.baseAddress))
            }
        }
    }

    static func epollWait(_ epfd: Int32, _ events: UnsafeMutableRawPointer, capacity: Int32, timeoutMillis: Int32) throws(NetError) -> Int {
        switch try run("epoll_wait", { Int(Epoll.wait(epfd, events, capacity, timeoutMillis)) }) {
        case .done(let count): return count
        case .wouldBlock: return 0
        }
    }

    static func eventFD() throws(NetError) -> Int32 {
        Int32(try must("eventfd") { Int(Epoll.eventfd(0, Epoll.nonblock | Epoll.cloexec)) })
    }
}
