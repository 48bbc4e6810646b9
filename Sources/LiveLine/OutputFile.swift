import Foundation
import Glibc
import LiveCore

/// A file a run writes late (the guest's snapshot at its end, a recording from the
/// first keyframe), checked when the run is set up so that a path that cannot be
/// written is an error at once, not after the run.
enum OutputFile {
    /// Throws unless the file `path` can be created or overwritten: it is no folder and
    /// is writable when it exists, its folder exists and is writable when it does not.
    /// `what` names it in the message ("snapshot", "recording"). Creates nothing.
    static func checkWritable(_ path: String, what: String) throws {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT != S_IFDIR else { throw LiveError(.invalidParams, "\(what) '\(path)' is a folder") }
            guard access(path, W_OK) == 0 else {
                throw LiveError(.invalidParams, "\(what) '\(path)' cannot be written: \(String(cString: strerror(errno)))")
            }
            return
        }
        let parent = (path as NSString).deletingLastPathComponent
        let folder = parent.isEmpty ? "." : parent
        guard stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw LiveError(.invalidParams, "\(what) '\(path)' cannot be written: there is no folder '\(folder)'")
        }
        guard access(folder, W_OK) == 0 else {
            throw LiveError(.invalidParams, "\(what) '\(path)' cannot be written in '\(folder)': \(String(cString: strerror(errno)))")
        }
    }

    /// Opens `path` for writing, truncating it, or standard output for "-" (then
    /// `owned` is false: not closed by the writer). nil when it cannot be opened, with
    /// `errno` telling why.
    static func openForWriting(_ path: String) -> (fd: Int32, owned: Bool)? {
        guard path != "-" else { return (STDOUT_FILENO, false) }
        let opened = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        return opened >= 0 ? (opened, true) : nil
    }
}
