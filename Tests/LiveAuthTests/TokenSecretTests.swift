import Foundation
import Testing

@testable import LiveAuth

@Suite("TokenSecret")
struct TokenSecretTests {
    /// A fresh folder under the system's temporary directory, removed by the caller.
    private func folder() throws -> String {
        let path = NSTemporaryDirectory() + "liveauth-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    @Test("create writes 32 random bytes as base64url with mode 0600, and load reads them back")
    func createAndLoad() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/secret"
        try TokenSecret.create(path: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasSuffix("\n"))
        #expect(Base64URL.decode(text.dropLast())?.count == 32)
        let secret = try TokenSecret.load(path: path)
        #expect(secret == Array(text.dropLast().utf8))
        // Two secrets differ.
        try TokenSecret.create(path: dir + "/other")
        #expect(try TokenSecret.load(path: dir + "/other") != secret)
    }

    @Test("create refuses to overwrite an existing file and leaves it as it was")
    func refusesOverwrite() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/secret"
        try "keep-this-secret-please\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(throws: TokenSecret.Error.exists(path: path)) { try TokenSecret.create(path: path) }
        #expect(try TokenSecret.load(path: path) == Array("keep-this-secret-please".utf8))
    }

    @Test("load trims whitespace and refuses missing, empty and short files")
    func loadRefusals() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(throws: TokenSecret.Error.cannotRead(path: dir + "/absent", errno: ENOENT)) {
            try TokenSecret.load(path: dir + "/absent")
        }
        try "\n  \n".write(toFile: dir + "/empty", atomically: false, encoding: .utf8)
        #expect(throws: TokenSecret.Error.tooShort(path: dir + "/empty", bytes: 0, minimum: 16)) {
            try TokenSecret.load(path: dir + "/empty")
        }
        #expect(TokenSecret.Error.tooShort(path: "f", bytes: 0, minimum: 16).description == "secret file f is empty")
        try "short\n".write(toFile: dir + "/short", atomically: false, encoding: .utf8)
        #expect(throws: TokenSecret.Error.tooShort(path: dir + "/short", bytes: 5, minimum: 16)) {
            try TokenSecret.load(path: dir + "/short")
        }
        try "  sixteen-bytes-ok  \r\n".write(toFile: dir + "/spaced", atomically: false, encoding: .utf8)
        #expect(try TokenSecret.load(path: dir + "/spaced") == Array("sixteen-bytes-ok".utf8))
        try String(repeating: "x", count: 70000).write(toFile: dir + "/huge", atomically: false, encoding: .utf8)
        #expect(throws: TokenSecret.Error.tooLarge(path: dir + "/huge", limit: 65536)) {
            try TokenSecret.load(path: dir + "/huge")
        }
    }
}
