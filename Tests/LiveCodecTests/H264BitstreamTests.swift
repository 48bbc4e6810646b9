import Testing
@testable import LiveCodec

@Suite struct H264BitstreamTests {
    static let sps: [UInt8] = [0x67, 0x64, 0x00, 0x0D, 0xAC, 0xB4, 0x0A, 0x0F, 0xD0, 0x80, 0x00, 0x00, 0x03,
                               0x00, 0x80, 0x00, 0x00, 0x1E, 0x47, 0x8A, 0x15, 0x50]
    static let pps: [UInt8] = [0x68, 0xEF, 0x3C, 0xB0]
    /// libx264's global header for 320x240 high profile (captured from this encoder):
    /// note the trailing zero byte after the SPS.
    static let x264Extradata: [UInt8] = [0, 0, 0, 1] + sps + [0, 0, 0, 0, 1] + pps

    @Test func iteratesAnnexBWithThreeAndFourByteStartCodes() {
        let bytes: [UInt8] = [0xAA, 0, 0, 0, 1, 0x09, 0xF0, 0, 0, 1, 0x67, 0x42, 0x00, 0x1F,
                              0, 0, 0, 1, 0x68, 0xCE, 0x3C, 0x80, 0, 0, 1, 0x65, 0x88, 0x84, 0x21, 0, 0]
        let units = H264Bitstream.annexBUnits(bytes).map(Array.init)
        #expect(units == [[0x09, 0xF0], [0x67, 0x42, 0x00, 0x1F], [0x68, 0xCE, 0x3C, 0x80], [0x65, 0x88, 0x84, 0x21]])
        #expect(units.map { H264Bitstream.nalType($0[0]) } == [9, 7, 8, 5])
        #expect(H264Bitstream.annexBUnits([0, 0, 1]).isEmpty)
        #expect(H264Bitstream.annexBUnits([1, 2, 3, 4]).isEmpty)
    }

    @Test func iteratesAVCCWithEveryLengthSize() throws {
        let units: [[UInt8]] = [[0x67, 1, 2], [0x68, 3], Array(repeating: 0x41, count: 200)]
        for lengthSize in [1, 2, 4] {
            var avcc: [UInt8] = []
            for unit in units {
                avcc += (0..<lengthSize).reversed().map { UInt8(truncatingIfNeeded: unit.count >> (8 * $0)) } + unit
            }
            #expect(try H264Bitstream.avccUnits(avcc, lengthSize: lengthSize).map(Array.init) == units)
            let annexB = try H264Bitstream.annexB(fromAVCC: avcc, lengthSize: lengthSize)
            #expect(annexB == units.flatMap { [0, 0, 0, 1] + $0 })
            #expect(try H264Bitstream.avcc(fromAnnexB: annexB, lengthSize: lengthSize) == avcc)
        }
        #expect(throws: H264Bitstream.Error.unsupportedLengthSize(3)) {
            try H264Bitstream.avccUnits([0, 0, 1, 0x65], lengthSize: 3)
        }
        #expect(throws: H264Bitstream.Error.truncatedLengthPrefixed(offset: 0)) {
            try H264Bitstream.avccUnits([0, 0, 0, 5, 0x65], lengthSize: 4)
        }
        #expect(throws: H264Bitstream.Error.nalUnitTooLong(300, lengthSize: 1)) {
            try H264Bitstream.avcc(fromAnnexB: [0, 0, 1] + Array(repeating: 0x41, count: 300), lengthSize: 1)
        }
    }

    @Test func emulationPreventionRoundTrips() {
        let rbsp: [UInt8] = [0, 0, 0, 0, 1, 0, 0, 3, 0, 0, 2, 0xFF, 0, 0]
        let escaped = H264Bitstream.addingEmulationPrevention(rbsp)
        #expect(escaped == [0, 0, 3, 0, 0, 3, 1, 0, 0, 3, 3, 0, 0, 3, 2, 0xFF, 0, 0, 3])
        #expect(H264Bitstream.removingEmulationPrevention(escaped) == rbsp)
        // No 00 00 0x left for a decoder to mistake for a start code.
        for i in 0..<(escaped.count - 2) {
            #expect(!(escaped[i] == 0 && escaped[i + 1] == 0 && escaped[i + 2] <= 2))
        }
        #expect(H264Bitstream.addingEmulationPrevention([1, 2, 0, 4]) == [1, 2, 0, 4])
    }

    @Test func buildsAndParsesTheAVCDecoderConfigurationRecord() throws {
        let record = try H264Bitstream.avcDecoderConfigurationRecord(fromAnnexB: Self.x264Extradata)
        let expected: [UInt8] = [1, 0x64, 0x00, 0x0D, 0xFF, 0xE1, 0x00, UInt8(Self.sps.count)] + Self.sps
            + [1, 0x00, 0x04] + Self.pps + [0xFD, 0xF8, 0xF8, 0x00]
        #expect(record == expected)
        let parsed = try H264Bitstream.parseAVCDecoderConfigurationRecord(record)
        #expect(parsed.lengthSize == 4 && parsed.profile == 0x64 && parsed.level == 0x0D)
        #expect(parsed.sps == [Self.sps] && parsed.pps == [Self.pps])
        #expect(parsed.annexB == [0, 0, 0, 1] + Self.sps + [0, 0, 0, 1] + Self.pps)
        #expect(throws: H264Bitstream.Error.missingParameterSets) {
            try H264Bitstream.avcDecoderConfigurationRecord(fromAnnexB: [0, 0, 1] + Self.sps)
        }
        // A baseline SPS gets no high-profile extension.
        let baseline: [UInt8] = [0x67, 0x42, 0xC0, 0x1E, 0xDA, 0x02, 0x80, 0xBF]
        let small = try H264Bitstream.avcDecoderConfigurationRecord(fromAnnexB: [0, 0, 0, 1] + baseline + [0, 0, 1] + Self.pps)
        #expect(small.count == 6 + 2 + baseline.count + 1 + 2 + Self.pps.count)
    }

    @Test func truncatedInputNeverCrashes() throws {
        let accessUnit = Self.x264Extradata + [0, 0, 1] + CaptureTimeSEI.nalUnit(captureTimeMicros: 1)
            + [0, 0, 0, 1, 0x65, 0x88, 0x84, 0x00, 0x00, 0x03, 0x01, 0x7F]
        let avcc = try H264Bitstream.avcc(fromAnnexB: accessUnit)
        let record = try H264Bitstream.avcDecoderConfigurationRecord(fromAnnexB: Self.x264Extradata)
        for end in 0..<accessUnit.count {
            let prefix = Array(accessUnit[..<end])
            #expect(H264Bitstream.annexBUnits(prefix).allSatisfy { !$0.isEmpty && $0.endIndex <= end })
            _ = try? H264Bitstream.avcc(fromAnnexB: prefix)
            _ = try? H264Bitstream.avcDecoderConfigurationRecord(fromAnnexB: prefix)
            _ = H264Bitstream.removingEmulationPrevention(prefix)
            _ = CaptureTimeSEI.find(annexB: prefix)
        }
        for end in 0..<avcc.count {
            let prefix = Array(avcc[..<end])
            for lengthSize in [1, 2, 4] {
                _ = try? H264Bitstream.avccUnits(prefix, lengthSize: lengthSize)
                _ = try? H264Bitstream.annexB(fromAVCC: prefix, lengthSize: lengthSize)
                _ = CaptureTimeSEI.find(avcc: prefix, lengthSize: lengthSize)
            }
        }
        var failures = 0
        for end in 0..<record.count where (try? H264Bitstream.parseAVCDecoderConfigurationRecord(Array(record[..<end]))) == nil {
            failures += 1
        }
        // Every cut before the PPS is complete fails cleanly; the optional extension may be cut.
        #expect(failures >= record.count - 4)
    }

    @Test func garbageNeverCrashes() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for round in 0..<2000 {
            var bytes: [UInt8] = []
            for _ in 0..<(round % 97) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                // Mostly zeros, ones and 03s, the bytes that matter to start codes and escapes.
                let r = UInt8(truncatingIfNeeded: state >> 56)
                bytes.append(r < 128 ? r % 4 : r)
            }
            let units = H264Bitstream.annexBUnits(bytes)
            #expect(units.allSatisfy { $0.startIndex >= 0 && $0.endIndex <= bytes.count })
            _ = CaptureTimeSEI.find(annexB: bytes)
            _ = CaptureTimeSEI.find(avcc: bytes, lengthSize: 1 << (round % 3))
            _ = CaptureTimeSEI.parse(nalUnit: [0x06] + bytes)
            _ = try? H264Bitstream.parseAVCDecoderConfigurationRecord([1] + bytes)
            _ = try? H264Bitstream.avcDecoderConfigurationRecord(fromAnnexB: [0, 0, 1, 0x67] + bytes + [0, 0, 1, 0x68, 1])
        }
    }
}
