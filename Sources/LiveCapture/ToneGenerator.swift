import Foundation
import LiveCore

/// The test source's sound: a steady tone with a short marker beep at the start of every
/// second of the capture clock, the instant the test pattern marks its video frame (frame
/// `k × fps`), so that a guest can measure audio/video sync by pairing them.
///
/// Pure: the samples are a function of their index on the capture clock (sample 0 at
/// capture time 0), so blocks of any size line up and a restart continues the same wave.
/// That function repeats every second (the phase restarts with each second, the marker
/// beeps at its start), so one second of samples is computed once and then read.
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
    /// One second of the signal, sample `i` of every second.
    private let second: [Float]

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
        let markerCount = Int(Self.markerDuration.micros) * sampleRate / 1_000_000
        let rate = Double(sampleRate)
        second = (0..<sampleRate).map { index in
            // The phase from the index within its second keeps the argument small.
            let hertz = markers && index < markerCount ? Self.markerFrequency : frequency
            return amplitude * Float(sin(2 * Double.pi * hertz * Double(index) / rate))
        }
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
        samples.withUnsafeMutableBufferPointer { out in
            second.withUnsafeBufferPointer { table in
                // Negative indices (before the capture clock's zero) wrap into the second before.
                var position = Int(((start % Int64(sampleRate)) + Int64(sampleRate)) % Int64(sampleRate))
                var offset = 0
                while offset < count {
                    let run = min(count - offset, sampleRate - position)
                    for channel in 0..<channelCount {
                        (out.baseAddress! + channel * count + offset).update(from: table.baseAddress! + position, count: run)
                    }
                    offset += run
                    position = 0
                }
            }
        }
        return AudioFrame(sampleRate: sampleRate, channelCount: channelCount, samples: samples,
                          pts: MediaTime(micros: start * 1_000_000 / Int64(sampleRate)))
    }
}
