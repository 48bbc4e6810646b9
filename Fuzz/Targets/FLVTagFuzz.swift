// libFuzzer entry point: FLV video/audio tag parsing, the AVC configuration record and
// AVCC → Annex B conversion, the AAC AudioSpecificConfig, and the player's checked
// reading of an audio message (RTMPAudioMessage) on arbitrary bytes.
import LiveRTMP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFLVTag(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let tag = try? FLVVideoTag(parsing: bytes) {
        if tag.payload.count != bytes.count && tag.codecID == FLVVideoTag.CodecID.avc {
            fatalError("FLV video tag re-encoding changed its length")
        }
        if let configuration = try? tag.decoderConfiguration() {
            _ = configuration.annexB
        }
        for lengthSize in [1, 2, 4] { _ = try? tag.annexB(lengthSize: lengthSize) }
    }
    if let audio = try? FLVAudioTag(parsing: bytes) {
        _ = try? AACAudioSpecificConfig(parsing: audio.data)
    }
    if case .configuration(let config, let asc)? = try? RTMPAudioMessage(parsing: bytes) {
        if asc.count > RTMPAudioMessage.maxConfigurationBytes || !(1...2).contains(config.channelConfiguration) {
            fatalError("RTMPAudioMessage let a header past its bounds")
        }
    }
    _ = FLVVideoTag.nalUnitsPayload(fromAnnexB: bytes, keyframe: true, compositionTime: -1)
    _ = try? FLVVideoTag.sequenceHeaderPayload(fromAnnexB: bytes)
    return 0
}
