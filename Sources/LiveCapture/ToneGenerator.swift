import Foundation
import LiveCore

/// The test source's sound: a steady tone with a short marker beep at the start of every
/// second of the capture clock, the instant the test pattern marks its video frame (frame
/// `k × fps`), so that a guest can measure audio/video sync by pairing them.
///
/// Pure: the samples are a function of their index on the capture clock (sample 0 at
/// capture time 0), so blocks of any size line up and a restart continues the same wave.
public struct ToneGenerator: Sendable {
    public static let defaultFrequency = 440.0
    /// The marker's frequency: far from the tones tests give co-hosts (200–2000 Hz).
    public static let markerFrequency = 3000.0
    /// The marker's length.
    public static let markerDuration = MediaTime(milliseconds: 50)

    public let frequency: Double
    public let sampleRate: Int
    public let channelCount: Int
    /// Peak amplitude of the tone and of the marker (−12 dBFS: room for a mix).
    public let amplitude: Float
    /// Whether the marker beeps sound (false: the tone only).
    public let markers: Bool

    public init(frequency: Double = defaultFrequency, sampleRate: Int = 48000, channelCount: Int = 2,
                amplitude: Float = 0.25, markers: Bool = true)
    {
        precondition(frequency > 0 && frequency < Double(sampleRate) / 2, "tone frequency must be under Nyquist")
        precondition((1...2).contains(channelCount) && amplitude >= 0 && amplitude <= 1, "invalid tone shape")
        self.frequency = frequency
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.amplitude = amplitude
        self.markers = markers
    }

    /// Samples in one marker beep.
    public var markerSampleCount: Int { Int(Self.markerDuration.micros) * sampleRate / 1_000_000 }

    /// Whether sample `index` (on the capture clock) falls in a marker beep.
    public func isMarker(_ index: Int64) -> Bool {
        markers && index >= 0 && index % Int64(sampleRate) < Int64(markerSampleCount)
    }

    /// `count` samples per channel from sample `start` on, timed at `start`'s instant.
    public func frame(start: Int64, count: Int) -> AudioFrame {
        var samples = [Float](repeating: 0, count: count * channelCount)
        let rate = Double(sampleRate)
        for offset in 0..<count {
            let index = start + Int64(offset)
            // The phase from the index modulo the period's sample count keeps the
            // argument small (no precision lost after hours).
            let hertz = isMarker(index) ? Self.markerFrequency : frequency
            let within = Double(index % Int64(sampleRate)) / rate
            let value = amplitude * Float(sin(2 * Double.pi * hertz * within))
            for channel in 0..<channelCount { samples[channel * count + offset] = value }
        }
        return AudioFrame(sampleRate: sampleRate, channelCount: channelCount, samples: samples,
                          pts: MediaTime(micros: start * 1_000_000 / Int64(sampleRate)))
    }
}
