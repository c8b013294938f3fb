import BLEAnalysis

/// The story's `transfer` lines (one per direction that carried application data): PDUs, bytes, time,
/// rate, the ceiling the link allowed and what limits it, from `Connection.transfer` (docs/RULES.md
/// "Transfer and its limits"). "sent 469 PDUs, 5159 bytes in 51 s, 100 bytes/s (link: 367); limited by
/// write-with-response, peripheral-latency, connection-interval".
enum TransferText {
    /// - Parameter all: every direction that carried a value; otherwise only a transfer worth
    ///   explaining: `busy` PDUs or more (the perf rules' own minimum) that the link, not the
    ///   application, held back — a few writes an hour apart, or an app sending less than the link
    ///   allowed, have a rate nobody asks about, and a long log would drown in such lines.
    static func lines(_ c: Connection, all: Bool = true) -> [String] {
        [("sent", c.transfer.sent), ("received", c.transfer.received)].compactMap { name, d in
            all || (d.pdus >= busy && d.limitedBy.first != .application) ? (d.pdus > 0 ? line(name, d) : nil) : nil
        }
    }
    static let busy = 50

    static func line(_ name: String, _ d: TransferDirection) -> String {
        let line = TextBuffer(capacity: 160)
        line.append(name)
        line.byte(UInt8(ascii: " "))
        line.append(ReportText.plural(d.pdus, "PDU"))
        line.append(", ")
        line.append(ReportText.plural(d.bytes, "byte"))
        guard let seconds = d.seconds else { return line.string }
        line.append(" in ")
        line.append(TimeFormat.duration(Int64(seconds * 1e6)))
        if let rate = d.bytesPerSecond {
            line.append(", ")
            line.append(number(rate))
            line.append(" bytes/s")
        }
        if let ceiling = d.ceilingBytesPerSecond {
            line.append(" (link: ")
            line.append(number(ceiling))
            line.append(")")
        } else {
            line.append(" (link: interval unknown)")
        }
        // The first three limits: the JSON has them all.
        let limits = d.limitedBy
        if !limits.isEmpty {
            line.append("; limited by ")
            line.append(limits.prefix(3).map(\.rawValue).joined(separator: ", "))
            if limits.count > 3 { line.append(", …") }
        }
        return line.string
    }

    /// Whole numbers from 100 up, one decimal below.
    static func number(_ v: Double) -> String {
        v >= 100 ? String(Int(v.rounded())) : String((v * 10).rounded() / 10)
    }
}
