import LiveMix

extension Arguments {
    /// The template options shared by `liveline layout` and `liveline host --mix`:
    /// --hor, --ver, --dir, --hor-pad, --ver-pad, --border, --gap.
    mutating func mixOptions() throws -> MixOptions {
        var options = MixOptions()
        do {
            if let hor = try value("--hor") { options.hor = try MixHorAlign(parsing: hor) }
            if let ver = try value("--ver") { options.ver = try MixVerAlign(parsing: ver) }
            if let dir = try value("--dir") { options.dir = try MixDirection(parsing: dir) }
        } catch let error as MixLayout.Error {
            throw UsageError(error.description)
        }
        if let pad = try int("--hor-pad", in: 0...4096) { options.horPad = pad }
        if let pad = try int("--ver-pad", in: 0...4096) { options.verPad = pad }
        if let border = try int("--border", in: 0...256) { options.borderWidth = border }
        if let gap = try int("--gap", in: 0...4096) { options.gap = gap }
        return options
    }

    /// `--NAME full|equal|bigSmall`.
    mutating func mixTemplate(_ name: String) throws -> MixTemplate? {
        guard let text = try value(name) else { return nil }
        guard let template = MixTemplate(name: text) else {
            throw UsageError("\(name) must be full, equal or bigSmall, not '\(text)'")
        }
        return template
    }
}

let mixOptionsHelp = """
      --hor left|center|right   where the line of co-host tiles is anchored across (default right)
      --ver top|center|bottom   where it is anchored up and down (default bottom)
      --dir hor|ver             the tiles form a row or a column (default ver)
      --hor-pad N               pixels between the outermost tile and the left/right edge (default 16)
      --ver-pad N               pixels between the outermost tile and the top/bottom edge (default 16)
      --border N                white border inside each small tile (default 2)
      --gap N                   pixels between adjacent tiles (default 8)
"""
