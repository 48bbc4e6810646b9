import LiveCapture
import LiveCodec
import LiveCore
import LiveFilter
import LiveMix

/// What the hoster captures and how it encodes it; the anyRTC SDK's hoster option plus
/// video config (reference/sdk-facts.md), with desktop defaults (720p30, 2.5 Mbit/s).
public struct HosterConfiguration: Sendable {
    /// `test`, `color:NAME`, `color:#RRGGBB`, `file:PATH` or `v4l2:/dev/videoN`.
    public var source = "test"
    public var width = 1280
    public var height = 720
    public var fps = 30
    public var bitrateKbps = 2500
    public var preset = "veryfast"
    public var keyframeIntervalSeconds = 2.0
    /// setCameraFilter.
    public var filter: CameraFilterMode = .original
    /// Beauty strength 0...1 when `filter` is `.beautiful`.
    public var beautyStrength = 0.6
    /// setFontCameraMirrorEnable.
    public var mirror = false
    /// setCameraZoom, 1.0...3.0.
    public var zoom = 1.0
    /// setLogoView: a PNG with alpha, placed at `logoPosition` (default: top right, 16 px
    /// in, or less for a logo nearly as large as the picture). It must lie wholly on the
    /// picture (`logoPlacement`).
    public var logoPath: String?
    public var logoPosition: (x: Int, y: Int)?
    /// setMixVideoModel / setVideoTemplate: how co-hosts are mixed into the picture.
    public var mixTemplate: MixTemplate = .full
    public var mixOptions = MixOptions()
    /// Solid-colour stand-ins for co-hosts (red, green, blue, yellow), to see a mix
    /// without a co-host line.
    public var mixTestCohosts = 0
    /// Pace synthetic and file sources in real time (false: as fast as possible, for benchmarks).
    public var realTime = true
    /// Video and audio, or audio only (the anyRTC SDK's living media mode).
    public var livingMediaMode: LivingMediaMode = .video
    /// The sound (`AudioSourceSpec` syntax: `tone`, `tone:HZ`, `silence`, `none`,
    /// `file:PATH`, `alsa:DEVICE`, `pulse:NAME`); nil: what the video source brings
    /// (`AudioSourceSpec.defaultFor(video:)`: the tone with `test`, the file's track
    /// with `file:`, none with a colour or a camera).
    public var audioSource: String?
    /// AAC-LC bitrate in kbit/s.
    public var audioBitrateKbps = 96
    /// 48000 or 44100.
    public var audioSampleRate = 48000
    /// 1 or 2.
    public var audioChannels = 2
    /// How often the local audio level is reported, in ms (the SDK's showTime).
    public var audioLevelIntervalMilliseconds = 500

    public static let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow"]

    public init() {}

    public var encoderConfig: H264EncoderConfig {
        var config = H264EncoderConfig(width: width, height: height, fps: fps, bitrateKbps: bitrateKbps)
        config.preset = preset
        config.keyframeIntervalSeconds = keyframeIntervalSeconds
        return config
    }

    /// The filter chain in its fixed order: zoom, camera filter, mirror, logo (last, so
    /// the logo is never mirrored or zoomed).
    public func makeFilterChain() throws -> FilterChain {
        var filters: [VideoFilter] = []
        if zoom != 1.0 { filters.append(ZoomFilter(zoom: zoom)) }
        switch filter {
        case .beautiful: filters.append(BeautyFilter(strength: beautyStrength))
        case .gaussianBlur: filters.append(GaussianBlurFilter())
        case .original: break
        }
        if mirror { filters.append(MirrorFilter()) }
        if let logoPath {
            let logo = try ImageFile.read(path: logoPath)
            let position = try logoPlacement(logoWidth: logo.width, logoHeight: logo.height)
            filters.append(WatermarkFilter(image: logo, x: position.x, y: position.y))
        }
        return FilterChain(filters)
    }

    /// Why a logo cannot go on the picture.
    public enum LogoError: Error, CustomStringConvertible, Equatable, Sendable {
        /// The logo is wider or taller than the picture.
        case larger(logoWidth: Int, logoHeight: Int, width: Int, height: Int)
        /// At `logoPosition` part of the logo lies off the picture.
        case offPicture(x: Int, y: Int, logoWidth: Int, logoHeight: Int, width: Int, height: Int)

        public var description: String {
            switch self {
            case let .larger(w, h, width, height):
                "the logo is \(w)x\(h), larger than the \(width)x\(height) picture; scale it down to fit"
            case let .offPicture(x, y, w, h, width, height):
                "the \(w)x\(h) logo at \(x),\(y) reaches past the \(width)x\(height) picture; "
                    + "place it at most at \(width - w),\(height - h)"
            }
        }
    }

    /// Where a logo of this size goes: `logoPosition`, or the top right corner 16 px in
    /// (less when the logo is nearly as large as the picture). Throws when the logo would
    /// not lie wholly on the picture, rather than clip it unseen.
    public func logoPlacement(logoWidth: Int, logoHeight: Int) throws(LogoError) -> (x: Int, y: Int) {
        guard logoWidth <= width, logoHeight <= height else {
            throw .larger(logoWidth: logoWidth, logoHeight: logoHeight, width: width, height: height)
        }
        guard let (x, y) = logoPosition else {
            return (max(0, width - logoWidth - 16), min(16, height - logoHeight))
        }
        guard x >= 0, y >= 0, x + logoWidth <= width, y + logoHeight <= height else {
            throw .offPicture(x: x, y: y, logoWidth: logoWidth, logoHeight: logoHeight, width: width, height: height)
        }
        return (x, y)
    }

    /// The audio source in effect: `audioSource`, or the video source's default.
    /// Throws `.invalidParams` for an unreadable spec, and when an audio-only live has
    /// no sound (`none`).
    public func audioSpec() throws -> AudioSourceSpec {
        let spec = try audioSource.map(AudioSourceSpec.init(parsing:))
            ?? AudioSourceSpec.defaultFor(video: try SourceSpec(parsing: source))
        if livingMediaMode == .audio, spec == .none {
            throw LiveError(.invalidParams, audioSource == nil
                ? "an audio-only live needs sound, and the video source '\(source)' brings none: name an audio source"
                : "an audio-only live needs sound: the audio source cannot be none")
        }
        return spec
    }

    /// The audio source and its AAC encoder; nil without audio. A sound the video
    /// source brings by default (a file's track) that cannot be opened leaves the stream
    /// silent, with a warning; one asked for (`audioSource`, or any sound of an
    /// audio-only live) is an error.
    public func makeAudio() throws -> (source: AudioSource, encoder: AACEncoder)? {
        let spec = try audioSpec()
        let source: AudioSource?
        do {
            source = try spec.makeSource(sampleRate: audioSampleRate, channelCount: audioChannels, realTime: realTime)
        } catch where audioSource == nil && livingMediaMode == .video {
            Log.warning("no audio: \(error)")
            return nil
        }
        guard let source else { return nil }
        let encoder = try AACEncoder(sampleRate: source.sampleRate, channelCount: source.channelCount,
                                     bitrateKbps: audioBitrateKbps)
        return (source, encoder)
    }

    /// The configured source, at the configured size and rate.
    public func makeSource() throws -> VideoSource {
        try SourceSpec(parsing: source).makeSource(width: width, height: height, fps: fps, realTime: realTime)
    }

    public static let mixTestColors = ["red", "green", "blue", "yellow"]

    /// The mix stage with its test co-hosts, or nil when there is nothing to mix.
    public func makeMix() throws -> HosterMix? {
        guard mixTestCohosts > 0 else { return nil }
        guard mixTestCohosts <= HosterConfiguration.mixTestColors.count else {
            throw LiveError(.invalidParams, "at most \(HosterConfiguration.mixTestColors.count) test co-hosts")
        }
        let mix = try HosterMix(width: width, height: height, template: mixTemplate, options: mixOptions)
        for name in HosterConfiguration.mixTestColors.prefix(mixTestCohosts) {
            let spec = try SourceSpec(parsing: "color:" + name)
            try mix.addCohost(source: try spec.makeSource(width: 640, height: 360, fps: 15, realTime: realTime))
        }
        return mix
    }
}

/// Video and audio, or audio only (the anyRTC SDK's ARLivingMediaMode: video = 0, audio = 1).
public enum LivingMediaMode: Int, Sendable, CaseIterable {
    case video = 0
    /// No picture at all: no video source, encoder or track; the stream is AAC only.
    case audio = 1

    /// `video` or `audio`, as the command line names it.
    public var name: String { self == .video ? "video" : "audio" }

    public init?(name: String) {
        guard let mode = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = mode
    }
}

extension HosterPipeline {
    /// A pipeline built from a configuration: source, filters, encoder, the sound and its
    /// encoder, and (`testMix`) the mix stage of `mixTestCohosts`; audio only in
    /// `.audio` mode. `filters` replaces the configuration's chain, `source` the
    /// configuration's source.
    public convenience init(configuration: HosterConfiguration, source: VideoSource? = nil, filters: FilterChain? = nil,
                            testMix: Bool = true) throws {
        if configuration.livingMediaMode == .audio {
            guard let audio = try configuration.makeAudio() else {
                throw LiveError(.invalidParams, "an audio-only live needs sound")
            }
            self.init(audioSource: audio.source, audioEncoder: audio.encoder)
            return
        }
        // The picture first: a video source that cannot be made is the error to report.
        let source = try source ?? configuration.makeSource()
        let encoder = try H264Encoder(config: configuration.encoderConfig)
        let filters = try filters ?? configuration.makeFilterChain()
        let audio = try configuration.makeAudio()
        self.init(source: source, filters: filters, encoder: encoder)
        if let audio { setAudio(source: audio.source, encoder: audio.encoder) }
        if testMix, let mix = try configuration.makeMix() {
            setMixStage(mix.process)
            onEnd { mix.stop() }
        }
    }
}
