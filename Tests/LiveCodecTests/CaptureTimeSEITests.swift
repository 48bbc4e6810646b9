import Testing
@testable import LiveCodec

@Suite struct CaptureTimeSEITests {
    @Test func nalUnitHasTheDocumentedBytes() {
        let nal = CaptureTimeSEI.nalUnit(captureTimeMicros: 0x0102_0304_0506_0708)
        #expect(nal == [0x06, 0x05, 0x18] + CaptureTimeSEI.uuid + [1, 2, 3, 4, 5, 6, 7, 8, 0x80])
        #expect(CaptureTimeSEI.parse(nalUnit: nal) == 0x0102_0304_0506_0708)
    }

    @Test(arguments: [UInt64(0), 1, 0x0000_0100_0000_0001, 0x0000_0003_0000_0000, 0x0300_0000_0000_0002,
                      1_767_225_600_123_456, UInt64.max])
    func timesNeedingEmulationPreventionRoundTrip(time: UInt64) {
        let nal = CaptureTimeSEI.nalUnit(captureTimeMicros: time)
        for i in 1..<(nal.count - 2) {
            #expect(!(nal[i] == 0 && nal[i + 1] == 0 && nal[i + 2] <= 2))
        }
        #expect(CaptureTimeSEI.parse(nalUnit: nal) == time)
        #expect(CaptureTimeSEI.find(annexB: [0, 0, 0, 1] + nal + [0, 0, 1, 0x65, 0x88]) == time)
    }

    @Test func escapesAreInsertedForZeroRuns() {
        let nal = CaptureTimeSEI.nalUnit(captureTimeMicros: 1)
        // 8 time bytes 00 00 00 00 00 00 00 01 need three emulation-prevention bytes.
        #expect(nal.count == 1 + 2 + 16 + 8 + 3 + 1)
        #expect(Array(nal.suffix(12)) == [0, 0, 3, 0, 0, 3, 0, 0, 3, 0, 1, 0x80])
    }

    @Test func findsItsMessageAmongOthers() {
        let otherUUID: [UInt8] = Array(repeating: 0x11, count: 16)
        var rbsp: [UInt8] = []
        rbsp += [5, 20] + otherUUID + [0, 0, 0, 9]  // another user-data message
        rbsp += [1, 2, 0xAB, 0xCD]  // picture timing
        rbsp += [5, 0xFF, 45] + otherUUID + Array(repeating: 0, count: 284)  // size ≥ 255
        rbsp += [0xFF, 4, 3, 1, 2, 3]  // payload type 259
        rbsp += [5, 24] + CaptureTimeSEI.uuid + [0, 0, 0, 0, 0, 0, 0x01, 0x02]
        rbsp += [0x80]
        let nal = [0x06] + H264Bitstream.addingEmulationPrevention(rbsp)
        #expect(CaptureTimeSEI.parse(nalUnit: nal) == 0x0102)
        // Without our message, nothing is found.
        let foreign = [0x06] + H264Bitstream.addingEmulationPrevention([5, 20] + otherUUID + [1, 2, 3, 4, 0x80])
        #expect(CaptureTimeSEI.parse(nalUnit: foreign) == nil)
        // Not an SEI at all.
        #expect(CaptureTimeSEI.parse(nalUnit: [0x65] + Array(nal.dropFirst())) == nil)
    }

    @Test func findsInAnnexBAndAVCCAccessUnits() throws {
        let accessUnit: [UInt8] = [0, 0, 0, 1, 0x09, 0xF0] + [0, 0, 0, 1] + H264BitstreamTests.sps
            + [0, 0, 0, 1] + H264BitstreamTests.pps + [0, 0, 1] + CaptureTimeSEI.nalUnit(captureTimeMicros: 42)
            + [0, 0, 1, 0x65, 0x88, 0x84, 0x21]
        #expect(CaptureTimeSEI.find(annexB: accessUnit) == 42)
        for lengthSize in [1, 2, 4] {
            let avcc = try H264Bitstream.avcc(fromAnnexB: accessUnit, lengthSize: lengthSize)
            #expect(CaptureTimeSEI.find(avcc: avcc, lengthSize: lengthSize) == 42)
        }
        // An SEI after the first slice belongs to no picture here.
        let late: [UInt8] = [0, 0, 1, 0x65, 0x88] + [0, 0, 1] + CaptureTimeSEI.nalUnit(captureTimeMicros: 42)
        #expect(CaptureTimeSEI.find(annexB: late) == nil)
    }

    @Test func insertsJustBeforeTheFirstSlice() {
        let threeByte: [UInt8] = [0, 0, 0, 1, 0x09, 0xF0, 0, 0, 0, 1] + H264BitstreamTests.pps + [0, 0, 1, 0x65, 0x88, 0x21]
        let inserted = CaptureTimeSEI.inserting(captureTimeMicros: 0x0000_0100_0000_0001, intoAnnexB: threeByte)
        #expect(H264Bitstream.annexBUnits(inserted).map { H264Bitstream.nalType($0.first!) } == [9, 8, 6, 5])
        #expect(CaptureTimeSEI.find(annexB: inserted) == 0x0000_0100_0000_0001)
        let nal = CaptureTimeSEI.nalUnit(captureTimeMicros: 0x0000_0100_0000_0001)
        #expect(inserted == Array(threeByte[..<(threeByte.count - 6)]) + [0, 0, 0, 1] + nal + [0, 0, 1, 0x65, 0x88, 0x21])

        let fourByte: [UInt8] = [0, 0, 0, 1, 0x67, 0x42, 0, 0, 0, 1, 0x41, 0x9A]
        let withSEI = CaptureTimeSEI.inserting(captureTimeMicros: 7, intoAnnexB: fourByte)
        #expect(withSEI == [0, 0, 0, 1, 0x67, 0x42] + [0, 0, 0, 1] + CaptureTimeSEI.nalUnit(captureTimeMicros: 7)
            + [0, 0, 0, 1, 0x41, 0x9A])
        // No slice: nothing to time.
        #expect(CaptureTimeSEI.inserting(captureTimeMicros: 7, intoAnnexB: [0, 0, 1, 0x67, 0x42]) == [0, 0, 1, 0x67, 0x42])
    }

    @Test func truncatedSEIIsRejected() {
        let nal = CaptureTimeSEI.nalUnit(captureTimeMicros: 0x0000_0100_0000_0001)
        // Every cut that loses part of the time (everything before the trailing 0x80) finds nothing.
        for end in 0..<(nal.count - 1) {
            #expect(CaptureTimeSEI.parse(nalUnit: Array(nal[..<end])) == nil)
        }
    }
}
