// swift-tools-version:6.0
// LiveLine: live video on Linux. Layers (DESIGN.md §1) import downwards only, in this order
// (a module imports only modules to its left; scripts/check-imports checks that, and that
// every target declares exactly the package modules it imports):
// CFFmpeg, CV4L2 → LiveCore → LiveAuth → LiveCodec → LiveCapture → LiveFilter → LiveMix
// → LiveNet → LiveRTMP → LiveSignal → LiveServer → LiveLine → liveline.
// LiveCore has the pure-Swift hashes (SHA-1, SHA-256, HMAC), so LiveAuth and LiveNet link no
// C library; FFmpeg comes in with LiveCodec. LiveSignal is the co-host line's protocol and
// client: the kits (LiveLine) use it without linking the relay (LiveServer), which only the
// `liveline` executable links, for `serve`.
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
        .target(name: "LiveAuth", dependencies: ["LiveCore"]),
        .target(name: "LiveCodec", dependencies: ["CFFmpeg", "LiveCore"], swiftSettings: optimize),
        .target(name: "LiveCapture", dependencies: ["CV4L2", "LiveCore", "LiveCodec"], swiftSettings: optimize),
        .target(name: "LiveFilter", dependencies: ["LiveCore"], swiftSettings: optimize),
        .target(name: "LiveMix", dependencies: ["LiveCore"], swiftSettings: optimize),
        .target(name: "LiveNet", dependencies: ["LiveCore"], swiftSettings: optimize),
        .target(name: "LiveRTMP", dependencies: ["LiveCore", "LiveCodec", "LiveNet"], swiftSettings: optimize),
        // The co-host line's protocol (requests, events, the announcement in connect's answer) and its client.
        .target(name: "LiveSignal", dependencies: ["LiveCore", "LiveNet", "LiveRTMP"], swiftSettings: optimize),
        .target(
            name: "LiveServer", dependencies: ["LiveCore", "LiveAuth", "LiveNet", "LiveRTMP", "LiveSignal"],
            // The browser pages' files, compiled into the binary (PackageResources.*): nothing
            // next to the binary at run time.
            resources: [.embedInCode("Web/watch.html"), .embedInCode("Web/watch.js")],
            swiftSettings: optimize),
        .target(
            name: "LiveLine",
            dependencies: ["LiveCore", "LiveAuth", "LiveCodec", "LiveCapture", "LiveFilter", "LiveMix", "LiveNet", "LiveRTMP", "LiveSignal"],
            swiftSettings: optimize),
        .executableTarget(
            name: "liveline",
            dependencies: ["LiveCore", "LiveAuth", "LiveCodec", "LiveCapture", "LiveFilter", "LiveMix", "LiveRTMP", "LiveServer", "LiveSignal", "LiveLine"]),
        .executableTarget(
            name: "liveline-bench", dependencies: ["LiveCore", "LiveCodec", "LiveCapture", "LiveFilter", "LiveLine"], path: "Benchmarks/PipelineBench",
            swiftSettings: optimize),
        .executableTarget(name: "compositor-bench", dependencies: ["LiveCore", "LiveMix"], path: "Benchmarks/CompositorBench", swiftSettings: optimize),
        .executableTarget(
            name: "audio-bench", dependencies: ["LiveCore", "LiveCapture", "LiveCodec", "LiveMix"], path: "Benchmarks/AudioBench",
            swiftSettings: optimize),
        .executableTarget(name: "rtmp-load", dependencies: ["LiveCore", "LiveNet", "LiveRTMP"], path: "Benchmarks/RTMPLoad", swiftSettings: optimize),
        // Helpers the test targets share (running programs, build products, ffprobe);
        // in no product, so only test bundles link it.
        .target(name: "LiveTestSupport", dependencies: ["LiveCore"], path: "Tests/LiveTestSupport"),
        .testTarget(name: "LiveCoreTests", dependencies: ["LiveCore"]),
        .testTarget(name: "LiveAuthTests", dependencies: ["LiveAuth", "LiveCore"]),
        .testTarget(name: "LiveCodecTests", dependencies: ["CFFmpeg", "LiveCore", "LiveCodec"]),
        .testTarget(name: "LiveCaptureTests", dependencies: ["LiveCore", "LiveCapture", "LiveTestSupport"]),
        .testTarget(name: "LiveFilterTests", dependencies: ["LiveCore", "LiveFilter"]),
        .testTarget(name: "LiveMixTests", dependencies: ["LiveCore", "LiveMix"]),
        .testTarget(name: "LiveNetTests", dependencies: ["LiveCore", "LiveNet", "LiveTestSupport"]),
        .testTarget(name: "LiveRTMPTests", dependencies: ["LiveCore", "LiveCodec", "LiveRTMP"]),
        .testTarget(name: "LiveSignalTests", dependencies: ["LiveCore", "LiveNet", "LiveRTMP", "LiveSignal", "LiveTestSupport"]),
        .testTarget(
            name: "LiveServerTests",
            dependencies: ["LiveCore", "LiveAuth", "LiveNet", "LiveRTMP", "LiveSignal", "LiveServer", "LiveTestSupport"]),
        .testTarget(
            name: "LiveLineTests",
            dependencies: [
                "LiveCore", "LiveAuth", "LiveCodec", "LiveCapture", "LiveMix", "LiveNet", "LiveRTMP", "LiveSignal", "LiveServer", "LiveLine",
                "LiveTestSupport",
            ]),
        .testTarget(name: "livelineTests", dependencies: ["liveline", "LiveCore", "LiveAuth", "LiveTestSupport"]),
    ],
    // Every target in the Swift 6 language mode, where the compiler checks what crosses
    // threads (STYLE.md 12).
    swiftLanguageModes: [.v6]
)
