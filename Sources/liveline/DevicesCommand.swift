import LiveCapture

/// `liveline devices`: the V4L2 cameras of this machine.
enum DevicesCommand: Command {
    static let name = "devices"
    static let help = """
        Usage: liveline devices [--json]

        Lists V4L2 video capture devices (/dev/video*) with their formats and frame sizes.

          --json   print them as a JSON array instead: per device path, card, driver,
                   busInfo and formats (fourcc, description, emulated, sizes as
                   {"width","height"} or a stepwise range); [] when there is none
          --help   show this text
        """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        let json = arguments.flag("--json")
        try arguments.finish()
        if json {
            print(V4L2Devices.scan().jsonText)
            return 0
        }
        let devices = V4L2Devices.list()
        if devices.isEmpty {
            print("No V4L2 capture devices found (no /dev/video* that can capture video).")
            return 0
        }
        for device in devices { print(device.description) }
        return 0
    }
}
