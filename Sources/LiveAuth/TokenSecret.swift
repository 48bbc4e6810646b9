import Foundation

/// The server's HS256 secret, kept in a file only its owner can read.
public enum TokenSecret {
    /// Why a secret file could not be made or read.
    public enum Error: Swift.Error, Equatable, CustomStringConvertible {
        /// `create` found a file there and left it alone.
        case exists(path: String)
        /// open, fchmod or write failed with `errno`.
        case cannotCreate(path: String, errno: Int32)
        /// open or read failed with `errno` (ENOENT: no such file).
        case cannotRead(path: String, errno: Int32)
        /// More than `limit` bytes: not a secret file.
        case tooLarge(path: String, limit: Int)
        /// Fewer than `minimum` bytes once trimmed (0: empty).
        case tooShort(path: String, bytes: Int, minimum: Int)

        public var description: String {
            switch self {
            case let .exists(path): "secret file \(path) already exists; refusing to overwrite it"
            case let .cannotCreate(path, code): "cannot create secret file \(path): \(String(cString: strerror(code)))"
            case let .cannotRead(path, code): "cannot read secret file \(path): \(String(cString: strerror(code)))"
            case let .tooLarge(path, limit): "secret file \(path) is larger than \(limit) bytes; is it the right file?"
            case let .tooShort(path, bytes, minimum):
                bytes == 0
                    ? "secret file \(path) is empty"
                    : "secret file \(path) holds \(bytes) bytes; a secret needs at least \(minimum)"
            }
        }
    }

    /// The shortest secret `load` accepts.
    public static let minimumBytes = 16
    /// The most `load` reads.
    static let maximumFileBytes = 65536

    /// 32 random bytes written as base64url text + "\n", file mode 0600, refuses to
    /// overwrite.
    public static func create(path: String) throws {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let text = Array((Base64URL.encode(random) + "\n").utf8)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw errno == EEXIST ? Error.exists(path: path) : Error.cannotCreate(path: path, errno: errno)
        }
        defer { close(fd) }
        // The umask can only narrow 0600, but make the mode explicit anyway.
        guard fchmod(fd, 0o600) == 0 else { throw Error.cannotCreate(path: path, errno: errno) }
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == text.count else {
            let code = written < 0 ? errno : EIO
            unlink(path)
            throw Error.cannotCreate(path: path, errno: code)
        }
    }

    /// The file's text without surrounding whitespace, as bytes (what a stock JWT library is
    /// given as the HS256 secret string); refuses a missing/empty file or one shorter than 16
    /// bytes, with a clear error.
    public static func load(path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Error.cannotRead(path: path, errno: errno) }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: maximumFileBytes + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw Error.cannotRead(path: path, errno: errno) }
            if got == 0 { break }
            count += got
        }
        guard count <= maximumFileBytes else { throw Error.tooLarge(path: path, limit: maximumFileBytes) }
        let secret = Array(String(decoding: bytes[..<count], as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        guard secret.count >= minimumBytes else {
            throw Error.tooShort(path: path, bytes: secret.count, minimum: minimumBytes)
        }
        return secret
    }
}
