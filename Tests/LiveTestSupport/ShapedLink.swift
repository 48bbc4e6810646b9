import Foundation

/// A link with a rate limit the test sets (scripts/netns-link): two network namespaces
/// joined by a veth pair, the hoster's side's upload limited by a tc token bucket.
/// A hoster runs in `hosterNamespace` and pushes to `serverAddress`, where a relay runs
/// in `serverNamespace`. Needs root.
///
/// `remove()` (also on deinit) stops what still runs inside and deletes both namespaces;
/// a test calls it in a `defer` so a failing test cleans up too. A link whose test
/// process died without removing it is removed by the next link made (the script's
/// owner check).
public final class ShapedLink {
    public let name: String
    public let hosterNamespace: String
    public let serverNamespace: String
    /// The hoster's side's address (10.77.0.1).
    public let hosterAddress: String
    /// The relay's side's address (10.77.0.2).
    public let serverAddress: String
    private var removed = false

    /// scripts/netns-link in this checkout.
    public static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/netns-link").path
    }

    /// Why no link can be made here (not root, or no permission to make a network
    /// namespace, as in an unprivileged container), nil when one can: a namespace is made
    /// and deleted once to find out.
    public static let unavailable: String? = {
        guard getuid() == 0 else { return "not root" }
        let probe = "netns-link-probe-\(getpid())"
        guard let made = try? ProcessOutput.run("/usr/sbin/ip", ["netns", "add", probe]) else {
            return "no /usr/sbin/ip (Debian's iproute2)"
        }
        guard made.status == 0 else { return "cannot make a network namespace: \(made.stderr)" }
        _ = try? ProcessOutput.run("/usr/sbin/ip", ["netns", "delete", probe])
        return nil
    }()

    /// Creates the link, unlimited until `setRate`.
    public init() throws {
        let output = try ProcessOutput.run(Self.script, ["up", "--owner", "\(getpid())"])
        guard output.status == 0 else { throw ShapedLinkError.failed("netns-link up: \(output.stderr)") }
        // link=NAME hoster_ns=… server_ns=… hoster_ip=… server_ip=…
        var fields: [String: String] = [:]
        for pair in output.text.split(whereSeparator: \.isWhitespace) {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        guard let name = fields["link"], let hoster = fields["hoster_ns"], let server = fields["server_ns"],
              let hosterIP = fields["hoster_ip"], let serverIP = fields["server_ip"] else {
            throw ShapedLinkError.failed("netns-link up printed: \(output.text)")
        }
        self.name = name
        hosterNamespace = hoster
        serverNamespace = server
        hosterAddress = hosterIP
        serverAddress = serverIP
    }

    /// Limits the hoster's upload to `kbit` kbit/s from now on (0: no limit).
    public func setRate(kbit: Int) throws {
        let output = try ProcessOutput.run(Self.script, ["rate", name, "\(kbit)"])
        guard output.status == 0 else { throw ShapedLinkError.failed("netns-link rate: \(output.stderr)") }
    }

    /// `executable arguments` run inside `namespace` (an `ip netns exec` command line,
    /// as executable and arguments for `Process`).
    public func command(in namespace: String, _ executable: String, _ arguments: [String]) -> (String, [String]) {
        ("/usr/sbin/ip", ["netns", "exec", namespace, executable] + arguments)
    }

    /// Stops what runs inside and deletes both namespaces; again is a no-op.
    public func remove() {
        guard !removed else { return }
        removed = true
        _ = try? ProcessOutput.run(Self.script, ["down", name])
    }

    deinit { remove() }
}

public enum ShapedLinkError: Error, CustomStringConvertible {
    case failed(String)

    public var description: String {
        switch self {
        case .failed(let message): message
        }
    }
}
