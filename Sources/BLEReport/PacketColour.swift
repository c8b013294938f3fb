/// ANSI colours of `packets` title lines on a terminal, as btmon draws them (`btmon --color`): the
/// direction shows in the title's colour — host → controller (`<`: commands, TX data) blue,
/// controller → host (`>`: events, RX data) magenta, log, system and mgmt records (`=`, `@`) green, a
/// malformed frame red — and the `#frame [hciN]` block white, the time yellow. Only escape codes
/// are added: the columns, and so the alignment, are those of the plain text.
public enum PacketColour {
    public static let reset: StaticString = "\u{1B}[0m"
    static let sent: StaticString = "\u{1B}[0;34m"
    static let received: StaticString = "\u{1B}[0;35m"
    static let note: StaticString = "\u{1B}[0;32m"
    static let malformed: StaticString = "\u{1B}[0;31m"
    static let frameNumber: StaticString = "\u{1B}[0;37m"
    static let time: StaticString = "\u{1B}[0;33m"

    /// The colour of a title line starting with `glyph` (`<`, `>`, `=` or `@`).
    static func title(glyph: UInt8, malformed: Bool) -> StaticString {
        if malformed { return Self.malformed }
        switch glyph {
        case 0x3C: return sent
        case 0x3E: return received
        default: return note
        }
    }
}
