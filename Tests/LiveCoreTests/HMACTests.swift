import Testing
@testable import LiveCore

@Suite("HMAC")
struct HMACTests {
    private static let longKeyText = Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)

    @Test("HMAC-SHA256: RFC 4231 test cases 1, 2, 3, 4, 6 and 7 (case 5 truncates the MAC)")
    func rfc4231() {
        let cases: [(key: [UInt8], message: [UInt8], mac: String)] = [
            ([UInt8](repeating: 0x0B, count: 20), Array("Hi There".utf8),
             "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
            (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            ([UInt8](repeating: 0xAA, count: 20), [UInt8](repeating: 0xDD, count: 50),
             "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
            (Array(1...25), [UInt8](repeating: 0xCD, count: 50),
             "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
            ([UInt8](repeating: 0xAA, count: 131), Self.longKeyText,
             "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
            ([UInt8](repeating: 0xAA, count: 131),
             Array(("This is a test using a larger than block-size key and a larger than block-size data. "
                 + "The key needs to be hashed before being used by the HMAC algorithm.").utf8),
             "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
        ]
        for (key, message, mac) in cases {
            #expect(hex(HMACSHA256.mac(key: key, message)) == mac)
        }
        #expect(HMACSHA256.size == 32)
    }

    @Test("HMAC-SHA1: RFC 2202 test cases 1 to 4, 6 and 7")
    func rfc2202() {
        let cases: [(key: [UInt8], message: [UInt8], mac: String)] = [
            ([UInt8](repeating: 0x0B, count: 20), Array("Hi There".utf8), "b617318655057264e28bc0b6fb378c8ef146be00"),
            (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8), "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
            ([UInt8](repeating: 0xAA, count: 20), [UInt8](repeating: 0xDD, count: 50), "125d7342b9ac11cd91a39af48aa17b4f63f175d3"),
            (Array(1...25), [UInt8](repeating: 0xCD, count: 50), "4c9007f4026250c6bc8414f9bf50c86c2d7235da"),
            ([UInt8](repeating: 0xAA, count: 80), Self.longKeyText, "aa4ae5e15272d00e95705637ce8a3b55ed402112"),
            ([UInt8](repeating: 0xAA, count: 80),
             Array("Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data".utf8),
             "e8e99d0f45237d786d6bbaa7965c7808bbff1a91"),
        ]
        for (key, message, mac) in cases {
            #expect(hex(HMAC<SHA1>.mac(key: key, message)) == mac)
        }
    }

    /// python3: hmac.new(pattern(k), pattern(100), hashlib.sha256).hexdigest()
    @Test("keys of 63, 64 and 65 bytes (the last one hashed first); parts give the MAC of their concatenation")
    func keyEdges() {
        let expected = [
            63: "b0c140d5d17589c6d25f7d70d1f5432484d99f8b7842ff00e6ecbe2473ccd2a0",
            64: "5171e7824a6389c177d4e27743ed46b10ba63cc6568041b4066c25ad97987709",
            65: "5b9a7fa1700a40539781187447f46be9dfe14a0a096167eef745e29c508350c5",
        ]
        let message = pattern(100)
        for (length, mac) in expected {
            #expect(hex(HMACSHA256.mac(key: pattern(length), message)) == mac)
            #expect(hex(HMACSHA256.mac(key: pattern(length), message[0..<30], message[30..<30], message[30...])) == mac)
        }
    }
}
