import Foundation

/// A failing V4L2 ioctl or syscall: which call, on which device, and errno.
public struct V4L2Error: Error, CustomStringConvertible, Equatable, Sendable {
    public let call: String
    public let errno: Int32
    public let path: String

    public init(call: String, errno: Int32, path: String = "") {
        self.call = call
        self.errno = errno
        self.path = path
    }

    public var description: String {
        let on = path.isEmpty ? "" : " on \(path)"
        return "\(call)\(on) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }

    /// Runs a syscall that returns -1 and sets errno on failure, retrying while it is
    /// interrupted by a signal (EINTR). Returns its result, or nil when it would block
    /// (EAGAIN) and `wouldBlockIsNil` is set; throws for any other failure.
    @discardableResult
    static func check(_ call: String, path: String = "", wouldBlockIsNil: Bool = false,
                      _ body: () -> Int32) throws -> Int32? {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = Foundation.errno
            if code == EINTR { continue }
            if code == EAGAIN && wouldBlockIsNil { return nil }
            throw V4L2Error(call: call, errno: code, path: path)
        }
    }
}
