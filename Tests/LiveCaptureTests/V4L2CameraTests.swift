import Foundation
import LiveCore
import Testing
@testable import LiveCapture

@Suite struct V4L2CameraTests {
    /// The I420 a YUYV buffer should become, computed sample by sample.
    static func referenceI420(yuyv: [UInt8], width: Int, height: Int, pitch: Int) -> [UInt8] {
        var y = [UInt8](), u = [UInt8](), v = [UInt8]()
        for row in 0..<height {
            for x in 0..<width { y.append(yuyv[row * pitch + (x / 2) * 4 + (x % 2) * 2]) }
        }
        for crow in 0..<(height / 2) {
            for cx in 0..<(width / 2) {
                let top = (2 * crow) * pitch + cx * 4, bottom = top + pitch
                u.append(UInt8((Int(yuyv[top + 1]) + Int(yuyv[bottom + 1]) + 1) / 2))
                v.append(UInt8((Int(yuyv[top + 3]) + Int(yuyv[bottom + 3]) + 1) / 2))
            }
        }
        return y + u + v
    }

    static func pattern(_ format: V4L2Format, sequence: UInt32) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: format.sizeImage)
        bytes.withUnsafeMutableBytes { SimulatedV4L2Device.fillPattern($0.baseAddress!, format: format, sequence: sequence) }
        return bytes
    }

    @Test func negotiatesTheExactSize() throws {
        let device = SimulatedV4L2Device()
        let camera = try V4L2Camera(path: "/dev/video0", width: 640, height: 480, fps: 30, device: device)
        #expect(camera.mode == V4L2Mode(pixelFormat: .yuyv, width: 640, height: 480, fps: 30))
        #expect(device.format?.pixelFormat == .yuyv)
        #expect(device.format?.width == 640)
        #expect(!camera.scales)
        #expect(camera.name.contains("Simulated Camera"))
    }

    @Test func negotiatesTheNearestSizeAndScales() throws {
        let device = SimulatedV4L2Device()
        let camera = try V4L2Camera(path: "/dev/video0", width: 1920, height: 1080, fps: 30, device: device)
        // 1080p exists only as MJPEG, which the camera does not decode: 720p YUYV is nearest.
        #expect(camera.mode == V4L2Mode(pixelFormat: .yuyv, width: 1280, height: 720, fps: 30))
        #expect(camera.scales)
        try camera.start()
        let frame = try #require(try camera.nextFrame())
        #expect(frame.width == 1920 && frame.height == 1080)
    }

    @Test func deliversTheConvertedYUYVPattern() throws {
        let device = SimulatedV4L2Device()
        let camera = try V4L2Camera(path: "/dev/video0", width: 640, height: 480, fps: 30, device: device)
        try camera.start()
        #expect(device.isStreaming)
        #expect(device.mappedCount == V4L2Camera.bufferCount)
        let format = try #require(device.format)
        // More frames than buffers: the camera must give each buffer back.
        for sequence in 0..<UInt32(10) {
            let frame = try #require(try camera.nextFrame())
            let expected = Self.referenceI420(yuyv: Self.pattern(format, sequence: sequence),
                                              width: 640, height: 480, pitch: format.bytesPerLine)
            #expect(planeBytes(frame) == expected, "frame \(sequence)")
            #expect(frame.pts == MediaTime(frame: Int64(sequence), fps: 30))
            #expect(frame.captureTimeMicros > 0)
        }
        camera.stop()
        #expect(!device.isStreaming)
        #expect(device.mappedCount == 0)
    }

    @Test func deliversTheNV12Pattern() throws {
        let device = SimulatedV4L2Device(offers: [.init(pixelFormat: .nv12, sizes: [(320, 240)])])
        let camera = try V4L2Camera(path: "/dev/video0", width: 320, height: 240, fps: 30, device: device)
        #expect(camera.mode.pixelFormat == .nv12)
        try camera.start()
        let frame = try #require(try camera.nextFrame())
        let format = try #require(device.format)
        let nv12 = Self.pattern(format, sequence: 0)
        let chroma = 320 * 240
        #expect(frame.sample(plane: 0, x: 13, y: 7) == nv12[7 * 320 + 13])
        #expect(frame.sample(plane: 1, x: 5, y: 9) == nv12[chroma + 9 * 320 + 10])
        #expect(frame.sample(plane: 2, x: 5, y: 9) == nv12[chroma + 9 * 320 + 11])
    }

    @Test func controlsHaveRangesAndRejectOutOfRange() throws {
        let camera = try V4L2Camera(path: "/dev/video0", width: 640, height: 480, fps: 30, device: SimulatedV4L2Device())
        let zoom = try #require(camera.zoom)
        #expect(zoom.minimum == 100 && zoom.maximum == 500)
        #expect(try camera.value(of: .zoom) == 100)
        try camera.setValue(250, for: .zoom)
        #expect(try camera.value(of: .zoom) == 250)
        try camera.setValue(40, for: .focus)
        #expect(try camera.value(of: .focus) == 40)

        let tooFar = #expect(throws: LiveError.self) { try camera.setValue(501, for: .zoom) }
        #expect(tooFar?.code == .invalidParams)
        let offStep = #expect(throws: LiveError.self) { try camera.setValue(42, for: .focus) }
        #expect(offStep?.code == .invalidParams)
        #expect(try camera.value(of: .zoom) == 250)
        #expect(camera.range(of: .exposure)?.defaultValue == 250)
    }

    @Test func missingControlsAreNil() throws {
        let device = SimulatedV4L2Device(controls: [:])
        let camera = try V4L2Camera(path: "/dev/video0", width: 640, height: 480, fps: 30, device: device)
        #expect(camera.zoom == nil && camera.focus == nil && camera.exposure == nil)
        #expect(try camera.value(of: .exposure) == nil)
        let error = #expect(throws: LiveError.self) { try camera.setValue(1, for: .zoom) }
        #expect(error?.code == .notSupported)
    }

    @Test func missingDeviceIsCameraNotFound() {
        let error = #expect(throws: LiveError.self) {
            try V4L2Camera(path: "/dev/video7", width: 640, height: 480, fps: 30, device: SimulatedV4L2Device())
        }
        #expect(error?.code == .cameraNotFound)
        let real = #expect(throws: LiveError.self) {
            try V4L2Camera(path: "/dev/no-such-video-node", width: 640, height: 480, fps: 30)
        }
        #expect(real?.code.rawValue == 6)
    }

    @Test func mjpegOnlyDeviceIsNotSupported() {
        let device = SimulatedV4L2Device(offers: [.init(pixelFormat: .mjpeg, sizes: [(1280, 720)])])
        let error = #expect(throws: LiveError.self) {
            try V4L2Camera(path: "/dev/video0", width: 1280, height: 720, fps: 30, device: device)
        }
        #expect(error?.code == .notSupported)
        #expect(error?.detail.contains("MJPG") == true)
        #expect(!device.isOpen)
    }

    @Test func restartsAfterStop() throws {
        let device = SimulatedV4L2Device()
        let camera = try V4L2Camera(path: "/dev/video0", width: 640, height: 480, fps: 30, device: device)
        try camera.start()
        _ = try camera.nextFrame()
        camera.stop()
        try camera.start()
        let frame = try #require(try camera.nextFrame())
        #expect(frame.pts == .zero)
        #expect(device.mappedCount == V4L2Camera.bufferCount)
    }

    @Test func unstartedCameraRefusesFrames() throws {
        let camera = try V4L2Camera(path: "/dev/video0", width: 640, height: 480, fps: 30, device: SimulatedV4L2Device())
        let error = #expect(throws: LiveError.self) { try camera.nextFrame() }
        #expect(error?.code == .notInitialized)
    }
}

@Suite struct V4L2DevicesTests {
    @Test func emptyDirectoryHasNoDevices() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ll-devices-\(getpid())-empty")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let found = V4L2Devices.scan(directory: dir.path)
        #expect(found.devices.isEmpty)
        #expect(found.description == "no V4L2 capture devices found")
        #expect(V4L2Devices.list(directory: dir.path).isEmpty)
    }

    @Test func nodesThatAreNotCamerasAreLeftOut() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ll-devices-\(getpid())-files")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(FileManager.default.createFile(atPath: dir.path + "/video0", contents: Data("not a device".utf8)))
        #expect(V4L2Devices.scan(directory: dir.path).devices.isEmpty)
    }

    @Test func probeDescribesASimulatedCamera() throws {
        let probed = try #require(V4L2Devices.probe(SimulatedV4L2Device(path: "/dev/video3"), path: "/dev/video3"))
        #expect(probed.capability.card == "Simulated Camera")
        #expect(probed.formats.map(\.format.pixelFormat) == [.yuyv, .mjpeg, .nv12])
        #expect(probed.description.contains("YUYV"))
        #expect(probed.description.contains("1280x720"))
        #expect(V4L2Devices.probe(SimulatedV4L2Device(path: "/dev/video3"), path: "/dev/video4") == nil)
    }
}

@Suite struct V4L2DevicesJSONTests {
    @Test("devices --json: a simulated camera with its formats and sizes; [] with none")
    func simulatedCameraAsJSON() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ll-devices-\(getpid())-json")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(V4L2Devices.scan(directory: dir.path).jsonText == "[]")
        #expect(FileManager.default.createFile(atPath: dir.path + "/video2", contents: Data()))
        let path = dir.path + "/video2"
        let found = V4L2Devices.scan(directory: dir.path) { SimulatedV4L2Device(path: path) }
        let json = try #require(try JSONSerialization.jsonObject(with: Data(found.jsonText.utf8)) as? [[String: Any]])
        #expect(json.count == 1)
        let device = try #require(json.first)
        #expect(device["path"] as? String == path)
        #expect(device["card"] as? String == "Simulated Camera")
        #expect(device["driver"] as? String == "simulated")
        #expect(device["busInfo"] as? String == "memory")
        let formats = try #require(device["formats"] as? [[String: Any]])
        #expect(formats.compactMap { $0["fourcc"] as? String } == ["YUYV", "MJPG", "NV12"])
        #expect(formats.first?["emulated"] as? Bool == false)
        let sizes = try #require(formats.first?["sizes"] as? [[String: Int]])
        #expect(sizes == [["width": 640, "height": 480], ["width": 1280, "height": 720]])
        #expect((formats[1]["sizes"] as? [[String: Int]])?.last == ["width": 1920, "height": 1080])
    }

    @Test("a stepwise size range keeps its bounds and steps")
    func stepwiseSizes() throws {
        let device = V4L2Devices.Device(
            path: "/dev/video9",
            capability: V4L2Capability(driver: "d", card: "c", busInfo: "b",
                                       capabilities: V4L2Capability.videoCapture | V4L2Capability.streaming),
            formats: [(V4L2FormatDescription(pixelFormat: .i420, description: "Planar YUV 4:2:0", emulated: true),
                       [.stepwise(minWidth: 16, maxWidth: 1920, stepWidth: 8, minHeight: 16, maxHeight: 1080, stepHeight: 2)])])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(V4L2Devices(devices: [device]).jsonText.utf8))
            as? [[String: Any]])
        let format = try #require((json.first?["formats"] as? [[String: Any]])?.first)
        #expect(format["fourcc"] as? String == "YU12")
        #expect(format["emulated"] as? Bool == true)
        #expect(format["sizes"] as? [[String: Int]] == [["minWidth": 16, "maxWidth": 1920, "stepWidth": 8,
                                                          "minHeight": 16, "maxHeight": 1080, "stepHeight": 2]])
    }
}
