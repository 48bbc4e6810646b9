import Foundation

/// The executables SwiftPM built beside the running test bundle.
public enum BuildProducts {
    /// The first folder above the test bundle that holds an executable `liveline`.
    public static var directory: URL {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: exe)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("liveline").path) { return url }
        }
        return URL(fileURLWithPath: ".build/debug")
    }

    /// The built `liveline` executable.
    public static var liveline: String { directory.appendingPathComponent("liveline").path }
}

/// A new empty folder under the system's temporary directory, named `prefix` + a UUID.
public func makeTemporaryDirectory(prefix: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
