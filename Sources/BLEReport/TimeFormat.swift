/// Timestamps (µs since the Unix epoch, UTC) as text, without Foundation's date formatters.
public enum TimeFormat {
    /// `2026-11-21 20:15:02.123456`
    public static func dateTime(_ micros: Int64) -> String {
        let (days, secOfDay, us) = split(micros)
        let (y, m, d) = civil(days)
        return "\(y)-\(two(m))-\(two(d)) " + clock(secOfDay, us)
    }

    /// `20:15:02.123456`
    public static func time(_ micros: Int64) -> String {
        let (_, secOfDay, us) = split(micros)
        return clock(secOfDay, us)
    }

    /// `1.234567` seconds, or `-0.000100` for a negative span.
    public static func seconds(_ micros: Int64) -> String {
        let sign = micros < 0 ? "-" : ""
        let m = micros.magnitude
        let frac = String(m % 1_000_000)
        return sign + String(m / 1_000_000) + "." + String(repeating: "0", count: 6 - frac.count) + frac
    }

    /// A duration measured with a clock of `step` µs (PacketLogger: 1 ms): below one step it is
    /// "< 1 ms", never "0 µs".
    public static func duration(_ micros: Int64, clockStep step: Int64) -> String {
        step > 1 && micros < step ? "< " + duration(step) : duration(micros)
    }

    /// `1 h 40 min`, `12.3 s`, `850 ms`: a duration a person reads at a glance.
    public static func duration(_ micros: Int64) -> String {
        if micros < 1000 { return "\(max(0, micros)) µs" }
        let ms = micros / 1000
        if ms < 10 { return "\(ms).\((micros / 100) % 10) ms" }
        if ms < 1000 { return "\(ms) ms" }
        let s = micros / 1_000_000
        if s < 60 { return "\(s).\((micros / 100_000) % 10) s" }
        if s < 3600 { return "\(s / 60) min \(s % 60) s" }
        if s < 2 * 86400 { return "\(s / 3600) h \((s % 3600) / 60) min" }
        return "\(s / 86400) days \((s % 86400) / 3600) h"
    }

    static func split(_ micros: Int64) -> (days: Int64, secOfDay: Int64, us: Int64) {
        var secs = micros / 1_000_000
        var us = micros % 1_000_000
        if us < 0 { us += 1_000_000; secs -= 1 }
        var days = secs / 86_400
        var sod = secs % 86_400
        if sod < 0 { sod += 86_400; days -= 1 }
        return (days, sod, us)
    }

    static func clock(_ sod: Int64, _ us: Int64) -> String {
        let u = String(us)
        return "\(two(sod / 3600)):\(two((sod % 3600) / 60)):\(two(sod % 60)).\(String(repeating: "0", count: 6 - u.count))\(u)"
    }

    static func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }

    /// Days since 1970-01-01 → (year, month, day), Howard Hinnant's `civil_from_days`.
    static func civil(_ z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}
