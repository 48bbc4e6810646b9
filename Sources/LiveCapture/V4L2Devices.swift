import Foundation

/// The V4L2 capture devices of this machine (`liveline devices`): each `/dev/video*`
/// node that captures video, with its card, driver, formats and sizes.
public struct V4L2Devices: CustomStringConvertible, Sendable {
    /// One capture device as it describes itself.
    public struct Device: Sendable, CustomStringConvertible {
        public var path: String
        public var capability: V4L2Capability
        public var formats: [(format: V4L2FormatDescription, sizes: [V4L2FrameSize])]

        public var description: String {
            var lines = ["\(path): \(capability.card) (driver \(capability.driver), \(capability.busInfo))"]
            for (format, sizes) in formats {
                let kind = format.emulated ? " (converted by libv4l2)" : ""
                let list = sizes.map(\.description).joined(separator: " ")
                lines.append("  \(format.pixelFormat) \(format.description)\(kind): \(list.isEmpty ? "sizes not listed" : list)")
            }
            return lines.joined(separator: "\n")
        }
    }

    public let devices: [Device]

    public init(devices: [Device]) { self.devices = devices }

    /// Probes every `/dev/video*` node through libv4l2; nodes that cannot be opened or
    /// do not capture video (metadata nodes, encoders) are left out. Empty when there is no camera.
    public static func scan(directory: String = "/dev", makeDevice: () -> V4L2DeviceIO = { LibV4L2Device() }) -> V4L2Devices {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let nodes = names.filter { $0.hasPrefix("video") && Int($0.dropFirst(5)) != nil }
            .sorted { Int($0.dropFirst(5))! < Int($1.dropFirst(5))! }
        var found: [Device] = []
        for node in nodes {
            let path = directory + "/" + node
            let device = makeDevice()
            if let probed = probe(device, path: path) { found.append(probed) }
            device.close()
        }
        return V4L2Devices(devices: found)
    }

    /// The capture devices found by `scan`, in node order; empty when there is no camera.
    public static func list(directory: String = "/dev") -> [Device] {
        scan(directory: directory).devices
    }

    /// What one device says about itself, or nil when it is not a capture device.
    public static func probe(_ device: V4L2DeviceIO, path: String) -> Device? {
        guard (try? device.open(path: path)) != nil,
              let capability = try? device.queryCapability(), capability.canCaptureStreaming else { return nil }
        let formats = ((try? device.enumerateFormats()) ?? []).map { format in
            (format, (try? device.enumerateFrameSizes(format: format.pixelFormat)) ?? [])
        }
        return Device(path: path, capability: capability, formats: formats)
    }

    public var description: String {
        devices.isEmpty ? "no V4L2 capture devices found" : devices.map(\.description).joined(separator: "\n")
    }
}
