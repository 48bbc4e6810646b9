import LiveCapture

/// `liveline devices`: the V4L2 cameras of this machine.
enum DevicesCommand: Command {
    static let name = "devices"
    static let help = """
        Usage: liveline devices

        Lists V4L2 video capture devices (/dev/video*) with their formats and frame sizes.
        """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        try arguments.finish()
        let devices = V4L2Devices.list()
        if devices.isEmpty {
            print("No V4L2 capture devices found (no /dev/video* that can capture video).")
            return 0
        }
        for device in devices { print(device.description) }
        return 0
    }
}
