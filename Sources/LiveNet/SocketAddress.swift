import Glibc

/// An IPv4 or IPv6 socket address, printable as "127.0.0.1:1935" or "[::1]:1935".
public struct SocketAddress: Sendable, CustomStringConvertible {
    var storage: sockaddr_storage
    var length: socklen_t

    init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    /// Resolves `host` (a numeric address or a name from /etc/hosts or DNS) and `port`.
    /// Name resolution blocks the calling thread, so call this off the event loop.
    public static func resolve(host: String, port: UInt16) throws(NetError) -> SocketAddress {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        // An empty host binds every interface, as "0.0.0.0" does.
        let name = host.isEmpty ? "0.0.0.0" : host
        var status = getaddrinfo(name, String(port), &hints, &list)
        if status != 0 {
            // AI_ADDRCONFIG hides loopback-only families on hosts with no other interface.
            hints.ai_flags = AI_NUMERICSERV
            status = getaddrinfo(name, String(port), &hints, &list)
        }
        guard status == 0, let first = list else {
            throw NetError.badAddress("getaddrinfo(\(host)): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
        }
        return SocketAddress(storage: storage, length: first.pointee.ai_addrlen)
    }

    /// AF_INET or AF_INET6.
    public var family: Int32 { Int32(storage.ss_family) }

    public var port: UInt16 {
        withUnsafeBytes(of: storage) { raw in
            // sin_port and sin6_port sit at the same offset, in network byte order.
            UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self))
        }
    }

    /// The numeric host part ("127.0.0.1", "::1").
    public var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        withUnsafeBytes(of: storage) { raw in
            let offset = family == AF_INET6 ? 8 : 4  // sin6_addr / sin_addr
            _ = inet_ntop(family, raw.baseAddress! + offset, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The 4 or 16 address bytes; an IPv4-mapped IPv6 address (::ffff:a.b.c.d, what a
    /// dual-stack socket reports for an IPv4 peer) gives its 4 IPv4 bytes.
    var addressBytes: [UInt8] {
        withUnsafeBytes(of: storage) { raw in
            if family == AF_INET6 {
                let bytes = Array(raw[8..<24])
                let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
                return mapped ? Array(bytes[12..<16]) : bytes
            }
            return Array(raw[4..<8])
        }
    }

    /// 127.0.0.0/8 or ::1 (IPv4-mapped loopback included).
    public var isLoopback: Bool {
        let bytes = addressBytes
        if bytes.count == 4 { return bytes[0] == 127 }
        return bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1
    }

    /// The host's own default loopback address: 127.0.0.1 or ::1 (IPv4-mapped included).
    public var isLocalHost: Bool {
        let bytes = addressBytes
        if bytes.count == 4 { return bytes == [127, 0, 0, 1] }
        return isLoopback
    }

    /// Who a per-address limit counts this peer as: its IPv4 address, or the /64 network
    /// of an IPv6 address (one host usually holds a whole /64, so counting single IPv6
    /// addresses would limit nothing).
    public var clientKey: String {
        let bytes = addressBytes
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            .joined(separator: ":") + "::/64"
    }

    public var description: String {
        family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
    }
}
