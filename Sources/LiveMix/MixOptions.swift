/// Where and how the tiles of a mix sit: the arguments of the anyRTC SDK's
/// `setVideoTemplate:ver:dir:horPad:verPad:borderWidth:`, plus the gap between tiles.
///
/// The defaults put the co-hosts in a column at the bottom right, stacked upwards
/// (as the anyRTC SDK's demo does), 16 pixels from the edges, with a 2-pixel white border
/// and 8 pixels between tiles (DESIGN.md §5).
///
/// Distances are in canvas pixels. I420 shares one chroma sample between 2x2 pixels,
/// so the layout rounds odd pads, gap and border up to the next even number: every
/// tile edge then falls on a chroma boundary and no colour bleeds across it.
public struct MixOptions: Equatable, Hashable, Sendable {
    public var hor: MixHorAlign
    public var ver: MixVerAlign
    public var dir: MixDirection
    /// Distance of the leftmost or rightmost tile from the canvas edge.
    public var horPad: Int
    /// Distance of the topmost or bottommost tile from the canvas edge.
    public var verPad: Int
    /// Width of the white border drawn inside each small tile (every cell for `equal`).
    public var borderWidth: Int
    /// Pixels between adjacent tiles.
    public var gap: Int

    public init(hor: MixHorAlign = .right, ver: MixVerAlign = .bottom, dir: MixDirection = .ver,
                horPad: Int = 16, verPad: Int = 16, borderWidth: Int = 2, gap: Int = 8) {
        self.hor = hor
        self.ver = ver
        self.dir = dir
        self.horPad = horPad
        self.verPad = verPad
        self.borderWidth = borderWidth
        self.gap = gap
    }
}
