import CFFmpeg
import LiveCore
import Testing

/// LiveCore's pure-Swift HMAC-SHA256 replaced libavutil's `av_hmac_*`, which signed tokens
/// and the RTMP digest handshake before; this checks the two agree, run against the
/// library at test time.
@Suite("HMAC-SHA256 against libavutil")
struct HMACLibavutilTests {
    private func libavutilMAC(key: [UInt8], _ message: [UInt8]) throws -> [UInt8] {
        let context = try #require(av_hmac_alloc(AV_HMAC_SHA256))
        defer { av_hmac_free(context) }
        var out = [UInt8](repeating: 0, count: 32)
        let written = key.withUnsafeBufferPointer { key in
            message.withUnsafeBufferPointer { message in
                out.withUnsafeMutableBufferPointer {
                    av_hmac_calc(context, message.baseAddress, UInt32(message.count), key.baseAddress, UInt32(key.count),
                                 $0.baseAddress, 32)
                }
            }
        }
        #expect(written == 32)
        return out
    }

    @Test("the same MAC as av_hmac for 300 random keys (0–200 bytes) and messages (0–1600 bytes)")
    func randomInputs() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let key = (0..<Int.random(in: 0...200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let message = (0..<Int.random(in: 0...1600, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(HMACSHA256.mac(key: key, message) == (try libavutilMAC(key: key, message)), "key \(key.count) B, message \(message.count) B")
        }
    }
}
