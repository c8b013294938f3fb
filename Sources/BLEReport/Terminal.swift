#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import BLEAnalysis

/// How the text report is drawn: ANSI colours or none, and the column to wrap at.
///
/// Colour only when the output is a terminal, `NO_COLOR` is unset (https://no-color.org) and
/// `TERM` is not `dumb`; when piped or written to a file the text is plain and 100 columns wide,
/// so `Reports/*.txt` and test outputs do not depend on the terminal they were made in.
public struct TerminalStyle: Sendable {
    public var colour: Bool
    public var width: Int

    public static let defaultWidth = 100
    public static let plain = TerminalStyle()

    public init(colour: Bool = false, width: Int = TerminalStyle.defaultWidth) {
        self.colour = colour
        self.width = min(max(width, 60), 200)
    }

    /// The style for output written to `fd`: colour and the terminal's width when it is a terminal.
    /// The corresponding C functions are `isatty` and `ioctl(TIOCGWINSZ)`.
    public static func detect(fd: Int32 = 1) -> TerminalStyle {
        guard isatty(fd) != 0 else { return .plain }
        var ws = winsize()
        let width = ioctl(fd, UInt(TIOCGWINSZ), &ws) == 0 && ws.ws_col > 0 ? Int(ws.ws_col) : defaultWidth
        return TerminalStyle(colour: colourAllowed, width: min(width, 140))
    }

    /// False when `NO_COLOR` is set to anything non-empty or `TERM=dumb`.
    public static var colourAllowed: Bool {
        if let v = getenv("NO_COLOR"), v.pointee != 0 { return false }
        if let t = getenv("TERM"), String(cString: t) == "dumb" { return false }
        return true
    }

    /// ANSI SGR codes used by the report.
    public enum Ink: String, Sendable {
        case bold = "1", dim = "2", red = "31", green = "32", yellow = "33", blue = "34", cyan = "36"
        case boldRed = "1;31", boldYellow = "1;33", boldCyan = "1;36", grey = "90"
    }

    /// `text` in `ink` when colour is on (the text itself must already be clean, see `clean`).
    public func paint(_ text: String, _ ink: Ink) -> String {
        colour && !text.isEmpty ? "\u{1B}[" + ink.rawValue + "m" + text + "\u{1B}[0m" : text
    }

    public func ink(for severity: Severity) -> Ink {
        switch severity {
        case .error: .boldRed
        case .warning: .boldYellow
        case .info: .boldCyan
        }
    }

    /// Control characters (escape sequences from device names, values) shown as `?`, so captured
    /// bytes can never drive the terminal. Newlines stay.
    public static func clean(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        out.unicodeScalars.append(contentsOf: text.unicodeScalars.map { isControl($0) ? "?" : $0 })
        return out
    }

    static func isControl(_ s: Unicode.Scalar) -> Bool {
        let v = s.value
        return (v < 0x20 && v != 0x0A) || (v >= 0x7F && v < 0xA0) || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v)
    }
}
