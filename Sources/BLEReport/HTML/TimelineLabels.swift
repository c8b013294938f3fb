/// Collision-free text on the timeline. Every label is placed through a `LabelPlacer`, which keeps
/// the box of each label already placed (its width estimated generously from the character count
/// and the font, since the page cannot measure text before it is drawn) and the area labels may use;
/// a label tries its candidate spots in order and is left out when none is free, its mark keeping
/// a tooltip. Zooming only spreads labels apart (positions scale from the plot's left edge), so a
/// page without overlaps at "Fit" has none when zoomed.
struct LabelFont {
    var size: Double
    var bold: Bool

    static let tick = LabelFont(size: 11, bold: false)
    static let fold = LabelFont(size: 10, bold: false)
    static let mark = LabelFont(size: 11, bold: false)
    static let markBold = LabelFont(size: 11, bold: true)
    static let flag = LabelFont(size: 12, bold: true)

    /// Width in SVG units, on the wide side: DejaVu Sans averages 0.55–0.6 em for lower case, 0.7 for
    /// capitals and digits in bold; symbols (✕ ⋯ ▸ ×) are counted as a full em.
    func width(_ text: String) -> Double {
        var em = 0.0
        for u in text.unicodeScalars {
            switch u.value {
            case 0x20: em += 0.34
            case 0x21 ... 0x7E: em += bold ? 0.74 : 0.64
            default: em += 1.0
            }
        }
        return em * size + 2
    }

    /// The line box around the baseline, as browsers report it (about 0.95 em above, 0.3 em below).
    var ascent: Double { size * 0.98 }
    var descent: Double { size * 0.3 }
}

struct LabelBox {
    var x0, x1, y0, y1: Double

    func intersects(_ o: LabelBox) -> Bool { x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1 }
    func inside(_ o: LabelBox) -> Bool { x0 >= o.x0 && x1 <= o.x1 && y0 >= o.y0 && y1 <= o.y1 }
}

/// Where a label may go: its text starts at `x` (or ends there, `anchorEnd`), baseline at `y`.
struct LabelSpot {
    var x: Double
    var y: Double
    var anchorEnd = false
}

struct LabelPlacer {
    /// The area labels must stay inside (the plot, whose clip path would cut them otherwise).
    let bounds: LabelBox
    private(set) var placed: [LabelBox] = []
    /// Horizontal gap kept between two labels.
    static let gap = 4.0

    init(bounds: LabelBox) { self.bounds = bounds }

    func box(_ text: String, _ font: LabelFont, _ spot: LabelSpot) -> LabelBox {
        let w = font.width(text)
        let x0 = spot.anchorEnd ? spot.x - w : spot.x
        return LabelBox(x0: x0, x1: x0 + w, y0: spot.y - font.ascent, y1: spot.y + font.descent)
    }

    /// True when `box` is inside the bounds and clear of every placed label.
    func free(_ b: LabelBox) -> Bool {
        guard b.inside(bounds) else { return false }
        let padded = LabelBox(x0: b.x0 - Self.gap, x1: b.x1 + Self.gap, y0: b.y0, y1: b.y1)
        return !placed.contains { $0.intersects(padded) }
    }

    /// The first free spot for `text`, reserved; nil when every spot is taken or out of bounds.
    mutating func place(_ text: String, _ font: LabelFont, _ spots: [LabelSpot]) -> LabelSpot? {
        for s in spots {
            let b = box(text, font, s)
            if free(b) {
                placed.append(b)
                return s
            }
        }
        return nil
    }

    /// Reserves an area that is not a label (a symbol drawn as text elsewhere, a lane title).
    mutating func reserve(_ b: LabelBox) { placed.append(b) }
}

extension SVGOut {
    /// A placed label as a zoomable `<text>` (its x follows the zoom, as its mark's does).
    mutating func label(_ text: String, _ spot: LabelSpot, cls: String) {
        at(spot.x, spot.y, "<text class=\"\(cls)\"\(spot.anchorEnd ? " text-anchor=\"end\"" : "")>\(HTML.escape(text))</text>")
    }
}
