import LiveRTMP
import Testing
@testable import LiveSignal

@Suite("Line signal announcement (pure)")
struct LineSignalAnnouncementTests {
    @Test("LineSignalAnnouncement: what a server announces is checked before use")
    func announcementParsing() {
        #expect(LineSignalAnnouncement(information: LineSignalAnnouncement(port: 8123).properties) == LineSignalAnnouncement(port: 8123))
        #expect(LineSignalAnnouncement(port: 9000, host: "10.0.0.2").signalURL(rtmpHost: "example.org") == "ws://10.0.0.2:9000/line")
        #expect(LineSignalAnnouncement(port: 9000).signalURL(rtmpHost: "::1") == "ws://[::1]:9000/line")
        #expect(LineSignalAnnouncement(information: AMF0Object()) == nil)
        for bad: AMF0Object in [["lineSignalPort": 0], ["lineSignalPort": 70000], ["lineSignalPort": 80.5],
                                ["lineSignalPort": "8080"], ["lineSignalPort": 80, "lineSignalPath": "line"],
                                ["lineSignalPort": 80, "lineSignalHost": "a/b"], ["lineSignalPort": 80, "lineSignalHost": "a b"]] {
            #expect(LineSignalAnnouncement(information: bad) == nil, "\(bad)")
        }
    }
}
