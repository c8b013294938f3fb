import BLEAnalysis

/// `connections[].transfer` of the JSON report (docs/report-schema.json, `$defs/transfer`): per
/// direction the application data (`pdus`, `bytes`), its span and rate, the ceiling the link allowed
/// and what limits it (docs/RULES.md "Transfer and its limits").
enum TransferJSON {
    static func write(_ c: Connection, _ w: inout JSONWriter) {
        w.beginObject("transfer")
        direction("sent", c.transfer.sent, &w)
        direction("received", c.transfer.received, &w)
        w.endObject()
    }

    static func direction(_ key: JSONKey, _ d: TransferDirection, _ w: inout JSONWriter) {
        w.beginObject(key)
        w.int("pdus", d.pdus)
        w.int("bytes", d.bytes)
        number("seconds", d.seconds, scale: 1e6, &w)
        number("bytesPerSecond", d.bytesPerSecond, scale: 10, &w)
        number("ceilingBytesPerSecond", d.ceilingBytesPerSecond, scale: 10, &w)
        w.beginArray("limitedBy")
        for l in d.limitedBy { w.string(nil, l.rawValue) }
        w.endArray()
        w.endObject()
    }

    /// Rounded to 1/`scale` (seconds to the µs, rates to 0.1 byte/s): the JSON stays short and stable.
    static func number(_ key: JSONKey, _ v: Double?, scale: Double, _ w: inout JSONWriter) {
        guard let v, v.isFinite else { w.null(key); return }
        w.double(key, (v * scale).rounded() / scale)
    }
}
