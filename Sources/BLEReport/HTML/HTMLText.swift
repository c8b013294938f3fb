/// Escaping and number formatting for the HTML report. Everything that came from a capture (device
/// names, GATT values, decoded text) goes through `escape`: the names are attacker-controlled.
enum HTML {
    /// Text safe in an HTML text node and in a double- or single-quoted attribute, in HTML and in
    /// inline SVG. Control characters and bidirectional overrides become U+FFFD, so captured bytes
    /// can neither break the markup nor reorder what the reader sees.
    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for ch in s.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\n", "\t": out.unicodeScalars.append(ch)
            case _ where TerminalStyle.isControl(ch) || ch.value == 0xFEFF: out += "\u{FFFD}"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out
    }

    /// A coordinate with one decimal, deterministic and short: `12.3`, `-4`, `0`.
    static func num(_ v: Double) -> String {
        guard v.isFinite else { return "0" }
        let tenths = Int64((v * 10).rounded())
        let whole = tenths / 10, frac = abs(tenths % 10)
        let sign = tenths < 0 && whole == 0 ? "-" : ""
        return frac == 0 ? "\(sign)\(whole)" : "\(sign)\(whole).\(frac)"
    }

    /// A rate or count for chart labels: `12`, `1.5k`, `2.3M`.
    static func compact(_ v: Double) -> String {
        if v >= 1_000_000 { return num(v / 1_000_000) + "M" }
        if v >= 10_000 { return String(Int((v / 1000).rounded())) + "k" }
        if v >= 1000 { return num(v / 1000) + "k" }
        if v >= 10 || v == v.rounded() { return String(Int(v.rounded())) }
        return num(v)
    }

    /// A time offset for axis labels, at the precision of `step` (µs): `+2.5 s`, `+350 ms`, `+40 µs`.
    static func offset(_ micros: Int64, step: Int64) -> String {
        if micros == 0 { return "0" }
        let sign = micros < 0 ? "−" : "+"
        let m = micros.magnitude
        // Zero parts are left out: +20 min, +1 h, +1 h 5 min, +2 min 30 s.
        if m >= 3_600_000_000 {
            let minutes = (m % 3_600_000_000) / 60_000_000
            return sign + "\(m / 3_600_000_000) h" + (minutes > 0 ? " \(minutes) min" : "")
        }
        if m >= 60_000_000 {
            let seconds = (m % 60_000_000) / 1_000_000
            return sign + "\(m / 60_000_000) min" + (seconds > 0 ? " \(seconds) s" : "")
        }
        if m >= 1_000_000 { return sign + decimal(m, unit: 1_000_000, step: step) + " s" }
        if m >= 1000 { return sign + decimal(m, unit: 1000, step: step) + " ms" }
        return sign + "\(m) µs"
    }

    /// `m / unit` with as many decimals as `step` needs (step 1: one decimal).
    static func decimal(_ m: UInt64, unit: UInt64, step: Int64) -> String {
        var decimals = 0, scale: UInt64 = 1
        while decimals < 3 && UInt64(max(step, 1)) * scale < unit && (step > 1 || decimals < 1) {
            decimals += 1
            scale *= 10
        }
        let scaled = (m * scale + unit / 2) / unit
        guard decimals > 0 else { return String(scaled) }
        let frac = String(scaled % scale)
        return "\(scaled / scale)." + String(repeating: "0", count: decimals - frac.count) + frac
    }

    /// An element id for a frame's decoded block.
    static func frameID(_ n: Int) -> String { "f\(n)" }
}
