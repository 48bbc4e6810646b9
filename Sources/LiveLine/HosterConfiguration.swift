import LiveCapture
import LiveCodec
import LiveCore
import LiveFilter
import LiveMix

/// What the hoster captures and how it encodes it; the seed's hoster option plus
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

extension HosterPipeline {
    /// A pipeline built from a configuration: source, filters, mix stage and encoder.
    public convenience init(configuration: HosterConfiguration) throws {
        let filters = try configuration.makeFilterChain()
        let source = try configuration.makeSource()
        let encoder = try H264Encoder(config: configuration.encoderConfig)
        self.init(source: source, filters: filters, encoder: encoder)
        if let mix = try configuration.makeMix() {
            setMixStage(mix.process)
            onEnd { mix.stop() }
        }
    }
}
