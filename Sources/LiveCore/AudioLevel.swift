import Foundation

/// The 0–100 audio level of the SDK's level callbacks (`onRTCLocalAudioActive`,
/// `onRTCHosterAudioActive`, `onRTCRemoteAudioActive`), from the RMS of a block of
/// samples: 0 at −60 dBFS and below (room noise, silence), 100 at 0 dBFS (a full-scale
/// square wave), linear in dB between, so each 6 dB (halving the amplitude) is 10 points.
/// A full-scale sine (RMS −3 dBFS) reads 95; a voice at a normal level, 60–80.
public enum AudioLevel {
    /// The quietest level that reads above 0, in dBFS.
    public static let floorDecibels = -60.0

    /// The level of `samples` (any channel layout: the RMS of them all).
    public static func of<Samples: Collection>(_ samples: Samples) -> Int where Samples.Element == Float {
        guard !samples.isEmpty else { return 0 }
        var sum = 0.0
        for sample in samples { sum += Double(sample) * Double(sample) }
        return level(rms: (sum / Double(samples.count)).squareRoot())
    }

    /// The level of a block whose RMS (full scale 1.0) is `rms`.
    public static func level(rms: Double) -> Int {
        guard rms.isFinite, rms > 0 else { return 0 }
        let decibels = 20 * log10(rms)
        let scaled = (decibels - floorDecibels) / -floorDecibels * 100
        return Int(min(100, max(0, scaled)).rounded())
    }
}
