// swift-tools-version:6.0
// LiveLine: live video on Linux. Layers (DESIGN.md §1) import downwards only:
// CFFmpeg, CV4L2 → LiveCore → LiveAuth → LiveCodec → LiveCapture → LiveFilter → LiveMix
// → LiveNet → LiveRTMP → LiveServer → LiveLine → liveline.
import PackageDescription

// Every target builds checked in release (-O): no unsafeFlags, which SwiftPM refuses in a
// dependency, and no -Ounchecked, so an overflow or a bad index traps instead of reading
// memory. The measured pixel loops get their speed from wrapping operators and unsafe
// buffers instead (STYLE.md 13). Kept as the one place for per-target settings.
let optimize: [SwiftSetting] = []

let package = Package(
    name: "LiveLine",
    products: [
        .library(name: "LiveLine", targets: ["LiveLine"]),
        .library(name: "LiveAuth", targets: ["LiveAuth"]),
        .executable(name: "liveline", targets: ["liveline"]),
    ],
    targets: [
        .systemLibrary(
            name: "CFFmpeg", path: "Sources/CFFmpeg", pkgConfig: "libavcodec",
            providers: [.apt(["libavcodec-dev", "libavformat-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev", "libavdevice-dev"])]),
        .systemLibrary(
            name: "CV4L2", path: "Sources/CV4L2", pkgConfig: "libv4l2",
            providers: [.apt(["libv4l-dev"])]),
        .target(name: "LiveCore", swiftSettings: optimize),
        // Access tokens: parsers of what peers send, so built with checks (no -Ounchecked).
        .target(name: "LiveAuth", dependencies: ["CFFmpeg", "LiveCore"]),
        .target(name: "LiveCodec", dependencies: ["CFFmpeg", "LiveCore"], swiftSettings: optimize),
        .target(name: "LiveCapture", dependencies: ["CV4L2", "LiveCore", "LiveCodec"], swiftSettings: optimize),
        .target(name: "LiveFilter", dependencies: ["LiveCore", "LiveCodec"], swiftSettings: optimize),
        .target(name: "LiveMix", dependencies: ["LiveCore", "LiveCodec"], swiftSettings: optimize),
        .target(name: "LiveNet", dependencies: ["LiveCore"], swiftSettings: optimize),
        .target(name: "LiveRTMP", dependencies: ["CFFmpeg", "LiveCore", "LiveAuth", "LiveCodec", "LiveNet"], swiftSettings: optimize),
        .target(name: "LiveServer", dependencies: ["LiveCore", "LiveAuth", "LiveCodec", "LiveNet", "LiveRTMP"], swiftSettings: optimize),
        .target(
            name: "LiveLine",
            dependencies: ["LiveCore", "LiveAuth", "LiveCodec", "LiveCapture", "LiveFilter", "LiveMix", "LiveNet", "LiveRTMP", "LiveServer"],
            swiftSettings: optimize),
        .executableTarget(name: "liveline", dependencies: ["LiveLine", "LiveAuth"]),
        .executableTarget(
            name: "liveline-bench", dependencies: ["LiveLine"], path: "Benchmarks/PipelineBench",
            swiftSettings: optimize),
        .executableTarget(name: "compositor-bench", dependencies: ["LiveMix"], path: "Benchmarks/CompositorBench", swiftSettings: optimize),
        .executableTarget(
            name: "audio-bench", dependencies: ["LiveCore", "LiveCapture", "LiveCodec", "LiveMix"], path: "Benchmarks/AudioBench",
            swiftSettings: optimize),
        .executableTarget(name: "rtmp-load", dependencies: ["LiveRTMP", "LiveNet"], path: "Benchmarks/RTMPLoad", swiftSettings: optimize),
        // Helpers the test targets share (running programs, build products, ffprobe);
        // in no product, so only test bundles link it.
        .target(name: "LiveTestSupport", dependencies: ["LiveCore"], path: "Tests/LiveTestSupport"),
        .testTarget(name: "LiveCoreTests", dependencies: ["LiveCore"]),
        .testTarget(name: "LiveAuthTests", dependencies: ["LiveAuth", "LiveCore"]),
        .testTarget(name: "LiveCodecTests", dependencies: ["LiveCodec"]),
        .testTarget(name: "LiveCaptureTests", dependencies: ["LiveCapture", "LiveTestSupport"]),
        .testTarget(name: "LiveFilterTests", dependencies: ["LiveFilter"]),
        .testTarget(name: "LiveMixTests", dependencies: ["LiveMix"]),
        .testTarget(name: "LiveNetTests", dependencies: ["LiveNet", "LiveTestSupport"]),
        .testTarget(name: "LiveRTMPTests", dependencies: ["LiveRTMP"]),
        .testTarget(name: "LiveServerTests", dependencies: ["LiveServer", "LiveRTMP", "LiveAuth", "LiveTestSupport"]),
        .testTarget(name: "LiveLineTests", dependencies: ["LiveLine", "LiveAuth", "LiveServer", "LiveTestSupport"]),
        .testTarget(name: "livelineTests", dependencies: ["liveline", "LiveCore", "LiveAuth", "LiveTestSupport"]),
    ],
    swiftLanguageModes: [.v5]
)
