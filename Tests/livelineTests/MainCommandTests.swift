import Foundation
import Testing

/// `liveline` itself: its help, its version, and `devices`.
@Suite("liveline help, --version and devices")
struct MainCommandTests {
    @Test("the help names --version, which prints the version")
    func versionInHelp() throws {
        let help = try CLI.liveline("--help")
        #expect(help.status == 0)
        #expect(help.stdout.contains("--version"), "\(help.stdout)")
        let version = try CLI.liveline("--version")
        #expect(version.status == 0)
        // The kits' version (LiveLineSDK.version, the SDK's getSDKVersion): MAJOR.MINOR.PATCH.
        #expect(version.stdout.range(of: #"^liveline \d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil, "\(version.stdout)")
    }

    @Test("devices --json prints a JSON array (of this machine's cameras, maybe none) and exits 0")
    func devicesJSON() throws {
        let result = try CLI.liveline("devices", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let parsed = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        let devices = try #require(parsed as? [[String: Any]], "\(result.stdout)")
        for device in devices {
            #expect(device["path"] is String)
            #expect(device["formats"] is [[String: Any]])
        }
        let help = try CLI.liveline("devices", "--help")
        #expect(help.stdout.contains("--json"))
    }
}
