import Foundation

/// The browser tests' surroundings: headless Chromium driven over the DevTools protocol
/// by the Python scripts in Tests/Browser (cdp.py), run with Debian's python3, which sees
/// python3-websocket (a pyenv or venv python on PATH may not).
public enum BrowserTest {
    /// The python that runs the scripts.
    public static let python = "/usr/bin/python3"
    /// Whether these tests (and so the `liveline` they run) are built with AddressSanitizer.
    /// The browser suites then do not run: they test the pages' JavaScript in Chromium,
    /// which the sanitizer does not instrument, the server paths they use run under it in
    /// the HTTP-FLV, HLS and watch page suites, and Chromium beside the sanitized suite
    /// only slows the timing-bound tests around it.
    public static let underAddressSanitizer = dlsym(nil, "__asan_init") != nil

    /// Tests/Browser in this package.
    public static var scripts: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Browser")
    }

    /// True when Chromium and python3-websocket are installed (scripts/setup installs both).
    public static let isAvailable: Bool = {
        guard let check = try? ProcessOutput.run(python, ["-c", "import sys; sys.path.insert(0, sys.argv[1]); import cdp; "
                                                          + "sys.exit(0 if cdp.chromium_path() else 1)", scripts.path]) else { return false }
        return check.status == 0
    }()

    /// Where a test keeps a screenshot for people to look at after the run:
    /// $LIVELINE_TEST_ARTIFACTS/NAME (default /tmp/liveline-test-artifacts; the folder is made).
    public static func artifact(_ name: String) throws -> String {
        let folder = URL(fileURLWithPath: ProcessInfo.processInfo.environment["LIVELINE_TEST_ARTIFACTS"] ?? "/tmp/liveline-test-artifacts")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent(name).path
    }
}
