import Foundation
import LiveCore
import Synchronization
import Testing
@testable import LiveFilter

@Suite struct FilterChainTests {
    /// A filter that sets every luma sample to `value` and notes that it ran.
    final class Paint: VideoFilter {
        let name: String
        let value: UInt8
        private let runCount = Atomic<Int>(0)
        var runs: Int { runCount.load(ordering: .relaxed) }

        init(_ name: String, value: UInt8) {
            self.name = name
            self.value = value
        }

        func process(_ frame: VideoFrame) -> VideoFrame {
            runCount.add(1, ordering: .relaxed)
            for y in 0..<frame.height { (frame.y + y * frame.stride(0)).update(repeating: value, count: frame.width) }
            return frame
        }
    }

    /// Runs `change` on another thread and waits for it, as the CLI or a kit would.
    static func onAnotherThread(_ change: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            change()
            done.signal()
        }
        done.wait()
    }

    @Test func runsFiltersInOrder() {
        let chain = FilterChain([Paint("a", value: 10), Paint("b", value: 20)])
        #expect(chain.names == ["a", "b"])
        let frame = VideoFrame(width: 16, height: 16)
        #expect(chain.process(frame).sample(plane: 0, x: 3, y: 3) == 20)
        chain.set([Paint("b", value: 20), Paint("a", value: 10)])
        #expect(chain.process(frame).sample(plane: 0, x: 3, y: 3) == 10)
    }

    @Test func passesTheReturnedFrameOn() {
        // Zoom returns a frame of its own pool; the mirror after it must work on that one.
        let zoom = ZoomFilter(zoom: 2)
        let chain = FilterChain([zoom, MirrorFilter()])
        let frame = ZoomFilterTests.quadrants(width: 64, height: 48)
        let out = chain.process(frame)
        #expect(out !== frame)
        // Top-left of the output shows the (zoomed) top-right quadrant after mirroring.
        #expect(out.pixel(x: 2, y: 2) == ZoomFilterTests.quadrantColors[1])
    }

    @Test func addRemoveAndReplaceTakeEffectAtTheNextFrame() {
        let chain = FilterChain()
        let frame = VideoFrame(width: 16, height: 16)
        frame.fill(.black)
        #expect(chain.process(frame).sample(plane: 0, x: 0, y: 0) == YUVColor.black.y)
        FilterChainTests.onAnotherThread { chain.append(Paint("paint", value: 50)) }
        #expect(chain.process(frame).sample(plane: 0, x: 0, y: 0) == 50)
        FilterChainTests.onAnotherThread { chain.replace(Paint("paint", value: 60)) }
        #expect(chain.names == ["paint"])
        #expect(chain.process(frame).sample(plane: 0, x: 0, y: 0) == 60)
        FilterChainTests.onAnotherThread { chain.insert(Paint("first", value: 1), at: 0) }
        #expect(chain.names == ["first", "paint"])
        #expect(chain.remove(named: "paint"))
        #expect(!chain.remove(named: "paint"))
        #expect(chain.process(frame).sample(plane: 0, x: 0, y: 0) == 1)
    }

    @Test func liveSettingChangesApplyAtTheNextFrame() {
        let mirror = MirrorFilter(enabled: false)
        let zoom = ZoomFilter()
        let beauty = BeautyFilter(strength: 0)
        let chain = FilterChain([beauty, zoom, mirror])
        let source = FrameFixtures.random(width: 64, height: 48, seed: 21)

        let untouched = chain.process(FrameFixtures.copy(source))
        #expect(FrameFixtures.samplesEqual(untouched, source))

        FilterChainTests.onAnotherThread { mirror.isEnabled = true }
        let mirrored = chain.process(FrameFixtures.copy(source))
        #expect(mirrored.sample(plane: 0, x: 0, y: 5) == source.sample(plane: 0, x: 63, y: 5))

        FilterChainTests.onAnotherThread {
            mirror.isEnabled = false
            zoom.zoom = 2
        }
        #expect(zoom.zoom == 2)
        let zoomed = chain.process(FrameFixtures.copy(source))
        #expect(!FrameFixtures.samplesEqual(zoomed, source))

        FilterChainTests.onAnotherThread {
            zoom.zoom = 1
            beauty.strength = 1
        }
        let beautified = chain.process(FrameFixtures.copy(source))
        #expect(!FrameFixtures.samplesEqual(beautified, source))

        FilterChainTests.onAnotherThread { beauty.strength = 0 }
        #expect(FrameFixtures.samplesEqual(chain.process(FrameFixtures.copy(source)), source))
    }

    @Test func cameraFilterModesKeepTheSDKNumbersAndNames() {
        #expect(CameraFilterMode.beautiful.rawValue == 0)
        #expect(CameraFilterMode.original.rawValue == 1)
        #expect(CameraFilterMode.gaussianBlur.rawValue == 2)
        #expect(CameraFilterMode(name: "beauty") == .beautiful)
        #expect(CameraFilterMode(name: "Original") == .original)
        #expect(CameraFilterMode(name: "blur") == .gaussianBlur)
        #expect(CameraFilterMode(name: "sepia") == nil)
        for mode in CameraFilterMode.allCases { #expect(CameraFilterMode(name: mode.name) == mode) }
        #expect(CameraFilterMode.beautiful.makeFilter() is BeautyFilter)
        #expect(CameraFilterMode.gaussianBlur.makeFilter() is GaussianBlurFilter)
        #expect(CameraFilterMode.original.makeFilter() == nil)
        #expect(CameraType.normal.rawValue == 0 && CameraType.beauty.rawValue == 1 && CameraType.thirdFilter.rawValue == 2)
        for type in CameraType.allCases { #expect(CameraType(name: type.name) == type) }
    }

    @Test func hookSeesEveryFrameAndMayReplaceIt() {
        let replacement = VideoFrame(width: 8, height: 8)
        let counter = FrameHookFilterCount()
        let hook = FrameHookFilter { frame in
            counter.value += 1
            return frame.width == 16 ? replacement : frame
        }
        let chain = FilterChain([hook])
        #expect(chain.process(VideoFrame(width: 16, height: 16)) === replacement)
        let other = VideoFrame(width: 32, height: 32)
        #expect(chain.process(other) === other)
        #expect(counter.value == 2)
        #expect(hook.name == "hook")
    }
}

final class FrameHookFilterCount: @unchecked Sendable {
    // @unchecked: counted by the hook on the thread that runs the chain, the test's own.
    var value = 0
}
