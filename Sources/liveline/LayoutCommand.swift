import LiveCodec
import LiveMix

/// `liveline layout`: where each participant of a mix sits, for a canvas and template.
enum LayoutCommand: Command {
    static let name = "layout"
    static let help = """
        Usage: liveline layout [options]

        Prints the rectangles of a mix layout, host first (DESIGN.md §6).

          --canvas WxH              canvas size (default 1280x720)
          --template NAME           full | equal | bigSmall (default full)
          --cohosts N               co-hosts besides the host, 0-4 (default 3)
        \(mixOptionsHelp)
          --json                    a JSON array of {"x","y","w","h","border"} instead of a drawing
          --png FILE.png            also write a picture of the layout to FILE.png
        """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        let canvas = try arguments.size("--canvas") ?? (1280, 720)
        let template = try arguments.mixTemplate("--template") ?? .full
        let cohosts = try arguments.int("--cohosts", in: 0...MixLayout.maxCohosts) ?? 3
        let options = try arguments.mixOptions()
        let json = arguments.flag("--json")
        let png = try arguments.value("--png")
        try arguments.finish()
        if let png, !png.lowercased().hasSuffix(".png") {
            throw UsageError("--png writes a PNG picture: give a file ending in .png, not '\(png)'")
        }
        let layout: MixLayout
        do {
            layout = try MixLayout(canvasWidth: canvas.width, canvasHeight: canvas.height, template: template,
                                   cohosts: cohosts, options: options)
        } catch {
            throw UsageError(error.description)
        }
        print(json ? layout.json() : layout.asciiDrawing())
        if let png { try ImageFile.writePNG(layout.picture(), path: png) }
        return 0
    }
}
