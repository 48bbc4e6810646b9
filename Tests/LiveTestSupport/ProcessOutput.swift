import Foundation

/// What a program printed and how it ended, after running it to its end.
public struct ProcessOutput {
    public var status: Int32
    public var stdout: Data
    public var stderr: String

    public var text: String { String(decoding: stdout, as: UTF8.self) }

    /// Runs `executable` to its end. Both pipes are read while it runs so neither can
    /// fill up and block it.
    public static func run(_ executable: String, _ arguments: [String]) throws -> ProcessOutput {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        final class Collected: @unchecked Sendable { var data = Data() }  // written once, read after the group waits
        let errData = Collected()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errData.data = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return ProcessOutput(status: process.terminationStatus, stdout: outData,
                             stderr: String(decoding: errData.data, as: UTF8.self))
    }
}
