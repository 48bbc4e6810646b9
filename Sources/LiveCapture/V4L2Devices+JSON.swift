import Foundation

extension V4L2Devices {
    /// The devices as a JSON array (`liveline devices --json`), one object per device:
    /// `path`, `card`, `driver`, `busInfo` and `formats`, each format with its `fourcc`,
    /// `description`, `emulated` (converted by libv4l2) and `sizes`: `{"width","height"}`
    /// for a fixed size, `{"minWidth","maxWidth","stepWidth","minHeight","maxHeight",
    /// "stepHeight"}` for a range. `[]` when there is no camera. One line, keys sorted.
    public var jsonText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Only strings, numbers and booleans: encoding cannot fail.
        let data = (try? encoder.encode(devices.map(DeviceJSON.init))) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

/// The JSON shape of one device (see `V4L2Devices.jsonText`).
private struct DeviceJSON: Encodable {
    struct Format: Encodable {
        var fourcc: String
        var description: String
        var emulated: Bool
        var sizes: [Size]
    }

    struct Size: Encodable {
        var width, height: Int?
        var minWidth, maxWidth, stepWidth, minHeight, maxHeight, stepHeight: Int?

        init(_ size: V4L2FrameSize) {
            switch size {
            case .discrete(let w, let h):
                width = w
                height = h
            case .stepwise(let minW, let maxW, let stepW, let minH, let maxH, let stepH):
                minWidth = minW
                maxWidth = maxW
                stepWidth = stepW
                minHeight = minH
                maxHeight = maxH
                stepHeight = stepH
            }
        }
    }

    var path: String
    var card: String
    var driver: String
    var busInfo: String
    var formats: [Format]

    init(_ device: V4L2Devices.Device) {
        path = device.path
        card = device.capability.card
        driver = device.capability.driver
        busInfo = device.capability.busInfo
        formats = device.formats.map { entry in
            Format(fourcc: entry.format.pixelFormat.description, description: entry.format.description,
                   emulated: entry.format.emulated, sizes: entry.sizes.map(Size.init))
        }
    }
}
