import BLEBytes
import BLEProtocol
import BLEAnalysis

/// Text for `timeline`, `gatt` and `adv`: what a person reads in a terminal.
public enum SessionText {
    /// One line per meaningful event per connection, then each value stream's count and rate.
    /// - Parameter only: the connections to tell (by index); nil: all, with the failed attempts.
    public static func timeline(_ model: SessionModel, only: Set<Int>? = nil) -> String {
        var s = ""
        if model.connections.isEmpty { s += "No connections in this capture.\n" }
        for c in model.connections where only?.contains(c.index) ?? true {
            s += header(c) + "\n"
            for e in mergedEvents(c) {
                s += "  " + TimeFormat.time(e.time) + "  #" + String(e.frame).padding(6) + e.text + "\n"
                if e.kind == .disconnected, e.frame == c.lifecycle.disconnectFrame, let end = c.endCause {
                    s += "  " + String(repeating: " ", count: 15) + "  " + String(repeating: " ", count: 7)
                        + "why (\(end.cause.kind.rawValue)): " + end.cause.text.naming(c) + "\n"
                }
            }
            if c.droppedTimelineEvents > 0 { s += "  … \(c.droppedTimelineEvents) more events not kept\n" }
            s += "\n"
        }
        let failed = only == nil ? ReportText.failedAttempts(model) : []
        for a in failed {
            s += "Attempt #\(a.frame) to \(a.peerAddress?.description ?? "filter accept list"): " + ReportText.describe(a.outcome)
                + (a.endFrame.map { " (frame \($0))" } ?? "") + "\n"
        }
        return s
    }

    public static func header(_ c: Connection) -> String {
        var parts = ["Connection \(c.index): handle \(c.handle)"]
        if c.adapter != 0 { parts.append("hci\(c.adapter)") }
        parts.append(c.isLE ? "LE" : "BR/EDR")
        if c.role != .unknown { parts.append(c.role.rawValue) }
        if c.peerAddress != nil || c.peerName != nil { parts.append("peer " + c.peerLabel) }
        if let start = c.startTime {
            // Set up before the capture began (no set-up in it): its span in the capture is a lower bound.
            let atLeast = c.lifecycle.inferred ? "at least " : ""
            if c.isOpen {
                // Open when the capture ended: it lasted at least until then.
                let end = max(c.captureEnd, c.traffic.lastDataTime ?? start)
                parts.append("open until the capture ended (\(atLeast)\(TimeFormat.duration(end - start)))")
            } else {
                parts.append("lasted " + atLeast + TimeFormat.duration((c.lifecycle.disconnectTime ?? start) - start))
            }
        }
        return parts.joined(separator: ", ")
    }

    /// The connection's stored events plus one summary line per value stream, in time order.
    /// Lines are built in a `TextBuffer`: a chain of `+` makes a String per piece (~400
    /// instructions each), and the report tells these per connection.
    public static func mergedEvents(_ c: Connection) -> [TimelineEvent] {
        var events = c.timeline
        let line = TextBuffer(capacity: 160)
        for stream in c.writeStreams.values.sorted(by: { $0.firstFrame < $1.firstFrame }) {
            let n = stream.notifications
            line.removeAll()
            line.decimal(n)
            line.append(n == 1 ? " write without response " : " writes without response ")
            line.append(stream.sentByHost ? "sent: " : "received: ")
            line.append(c.attributeName(stream.handle, serverIsHost: !stream.sentByHost))
            line.append(", ")
            appendPlural(stream.bytes, "byte", to: line)
            line.append(rateText(count: n, span: stream.lastTime - stream.firstTime))
            events.append(TimelineEvent(time: stream.firstTime, frame: stream.firstFrame, kind: .write, text: line.string))
        }
        for side in [true, false] {
            if let e = requestSummary(c, sentByHost: side) { events.append(e) }
        }
        for stream in c.valueStreams.values.sorted(by: { $0.firstFrame < $1.firstFrame }) {
            let n = stream.notifications + stream.indications
            guard n > 1 else { continue }
            line.removeAll()
            line.append("last of ")
            line.decimal(n)
            line.append(stream.indications > 0 ? " indications " : " notifications ")
            line.append(stream.sentByHost ? "sent: " : "received: ")
            line.append(c.attributeName(stream.handle, serverIsHost: stream.sentByHost))
            line.append(", ")
            appendPlural(stream.bytes, "byte", to: line)
            line.append(rateText(count: n, span: stream.lastTime - stream.firstTime))
            if stream.indications > 0 {
                line.append(", ")
                line.decimal(stream.confirmations)
                line.append(" confirmed")
            }
            events.append(TimelineEvent(time: stream.lastTime, frame: stream.lastFrame, kind: .notifications, text: line.string))
        }
        return events.sorted { ($0.time, $0.frame) < ($1.time, $1.frame) }
    }

    /// `ReportText.plural` into a buffer: "1 byte", "2 bytes".
    static func appendPlural(_ n: Int, _ word: StaticString, to line: TextBuffer) {
        line.decimal(n)
        line.byte(UInt8(ascii: " "))
        line.append(word)
        if n != 1 { line.byte(UInt8(ascii: "s")) }
    }

    /// "over 1 h 8 min (about 12/s)": the span, and a rate only where it means something (ten values
    /// or more over a second or more); a rate under one per second reads as "one every N".
    static func rateText(count n: Int, span: Int64) -> String {
        guard span > 0, n > 1 else { return "" }
        var text = " over " + TimeFormat.duration(span)
        guard n >= 10, span >= 1_000_000 else { return text }
        let perSecond = Double(n - 1) * 1e6 / Double(span)
        if perSecond >= 10 { text += " (about \(Int(perSecond.rounded()))/s)" }
        else if perSecond >= 1 { text += " (about \((perSecond * 10).rounded() / 10)/s)" }
        else { text += " (one every " + TimeFormat.duration(Int64(1e6 / perSecond)) + " on average)" }
        return text
    }


    /// One line for the application's answered requests in one direction: counts per request type,
    /// the attribute most of them went to (named), the time to the answer, the Error Responses.
    /// "sent 77 writes (76 to 02f00000…ff01 @0x0018), 2 reads: answered in 66 ms on average, 296 ms at most".
    static func requestSummary(_ c: Connection, sentByHost: Bool) -> TimelineEvent? {
        var entries = c.att.requestStats.entries.filter { $0.sentByHost == sentByHost }
        for bearer in c.channelBearers.values { entries += bearer.att.requestStats.entries.filter { $0.sentByHost == sentByHost } }
        guard let first = entries.min(by: { $0.firstFrame < $1.firstFrame }) else { return nil }
        let db = c.gatt(serverIsHost: !sentByHost)
        var opcodes: [ATTOpcode] = []
        for e in entries.sorted(by: { $0.firstFrame < $1.firstFrame }) where !opcodes.contains(e.opcode) { opcodes.append(e.opcode) }
        // One buffer for the line (a String per `+` piece cost ~30,000 instructions per connection).
        let line = TextBuffer(capacity: 160)
        line.append(sentByHost ? "sent " : "answered the peer's ")
        for (i, op) in opcodes.enumerated() {
            if i > 0 { line.append(", ") }
            var total = 0
            // The attribute most of them went to (the first of the most), when it is most of them
            // (CCCD writes are told as subscriptions).
            var top: RequestStats.Entry? = nil
            for e in entries where e.opcode == op {
                total += e.count
                if let h = e.handle, !(db?.isCCCD(h) ?? false), top.map({ $0.count < e.count }) ?? true { top = e }
            }
            line.decimal(total)
            line.byte(UInt8(ascii: " "))
            line.append(requestNoun(op, plural: total != 1))
            if let top, let h = top.handle, top.count * 2 > total {
                line.append(" (")
                if top.count != total { line.decimal(top.count); line.byte(UInt8(ascii: " ")) }
                line.append("to ")
                line.append(shortAttribute(db?.describe(h)) ?? "handle 0x" + Hex.pad(h, 4))
                line.byte(UInt8(ascii: ")"))
            }
        }
        let count = entries.reduce(0) { $0 + $1.count }
        let errors = entries.reduce(0) { $0 + $1.errors }
        let average = entries.reduce(Int64(0)) { $0 + $1.latencyTotal } / Int64(max(1, count))
        let worst = entries.map(\.latencyMax).max() ?? 0
        line.append(sentByHost ? ": answered in " : " in ")
        let step = c.att.clockStep
        if count == 1 {
            line.append(TimeFormat.duration(worst, clockStep: step))
        } else {
            line.append(TimeFormat.duration(average, clockStep: step))
            line.append(" on average, ")
            line.append(TimeFormat.duration(worst, clockStep: step))
            line.append(" at most")
        }
        if errors > 0 {
            line.append(", ")
            line.decimal(errors)
            line.append(" with an Error Response")
        }
        return TimelineEvent(time: first.firstTime, frame: first.firstFrame, kind: .requests, text: line.string)
    }

    /// Short nouns for the requests an application makes.
    static func requestNoun(_ op: ATTOpcode, plural: Bool) -> String {
        let noun: String
        switch op {
        case .writeRequest: noun = "write"
        case .readRequest: noun = "read"
        case .readBlobRequest: noun = "blob read"
        case .prepareWriteRequest: noun = "prepared write"
        case .executeWriteRequest: noun = "execute write"
        case .readMultipleRequest, .readMultipleVariableRequest: noun = "multiple read"
        default: return op.name + (plural ? "s" : "")
        }
        return noun + (plural ? "s" : "")
    }

    /// A vendor 128-bit UUID in an attribute name shortened to its first and last digits
    /// ("02f00000…ff01 @0x0018"); SIG names stay whole.
    static func shortAttribute(_ name: String?) -> String? {
        guard let name else { return nil }
        guard name.utf8.count >= 36 else { return name }
        if let short = shortAttributeASCII(name) { return short }
        guard name.utf8.contains(UInt8(ascii: "-")) else { return name }
        return name.split(separator: " ", omittingEmptySubsequences: false).map { word -> String in
            word.count == 36 && word.filter({ $0 == "-" }).count == 4 ? word.prefix(8) + "…" + word.suffix(4) : String(word)
        }.joined(separator: " ")
    }

    /// `shortAttribute` on bytes for a name in ASCII without CR (one byte per Character), as
    /// nearly all are: the Character-wise split cost ~20,000 instructions per connection. Nil for
    /// other names. Written straight into the String's storage: a shortened word (36 bytes to
    /// 8 + 3 + 4) never makes the name longer.
    private static func shortAttributeASCII(_ name: String) -> String? {
        var name = name
        return name.withUTF8 { utf8 -> String? in
            for byte in utf8 where byte >= 0x80 || byte == 0x0D { return nil }
            return String(unsafeUninitializedCapacity: utf8.count) { out in
                var at = 0
                func put(_ bytes: UnsafeBufferPointer<UInt8>) {
                    for b in bytes { out[at] = b; at += 1 }
                }
                var start = 0
                while start <= utf8.count {
                    var end = start
                    var dashes = 0
                    while end < utf8.count, utf8[end] != UInt8(ascii: " ") {
                        if utf8[end] == UInt8(ascii: "-") { dashes += 1 }
                        end += 1
                    }
                    if start > 0 { out[at] = UInt8(ascii: " "); at += 1 }
                    if end - start == 36, dashes == 4 {
                        put(UnsafeBufferPointer(rebasing: utf8[start ..< start + 8]))
                        StaticString("…").withUTF8Buffer { put($0) }
                        put(UnsafeBufferPointer(rebasing: utf8[start + 32 ..< end]))
                    } else {
                        put(UnsafeBufferPointer(rebasing: utf8[start ..< end]))
                    }
                    start = end + 1
                }
                return at
            }
        }
    }

    /// The rebuilt attribute table per server.
    public static func gatt(_ model: SessionModel) -> String {
        var s = ""
        let dbs = model.databases.values.filter { !$0.isEmpty }.sorted { $0.owner < $1.owner }
        if dbs.isEmpty { return "No GATT discovery in this capture.\n" }
        for db in dbs {
            s += "GATT server \(serverHeading(db))\n"
            for line in gattLines(db) { s += line + "\n" }
            s += "\n"
        }
        return s
    }

    /// The server as the report names its peer: `HORIZON 7.4AT 55FD (FA:E4:E3:24:20:09)`, then what
    /// else the owner says (`(table 2, from connection 3)`); the owner alone when no name is known.
    public static func serverHeading(_ db: GATTDatabase) -> String {
        guard let name = db.peerName, let a = db.peerAddress?.description, db.owner.hasPrefix(a) else { return db.owner }
        return "\(name) (\(a))" + db.owner.dropFirst(a.count)
    }

    /// `0x000e  Primary Service  Heart Rate (0x180D)  0x000e–0x0013` and nested characteristics/descriptors.
    public static func gattLines(_ db: GATTDatabase) -> [String] {
        var lines: [String] = []
        let services = db.services.values.sorted { $0.handle < $1.handle }
        let chars = db.characteristics.values.sorted { $0.declarationHandle < $1.declarationHandle }
        let descs = db.descriptors.values.sorted { $0.handle < $1.handle }
        var usedChars = Set<UInt16>(), usedDescs = Set<UInt16>()
        func h(_ v: UInt16) -> String { Hex.code(v, 4) }
        func characteristicLines(_ c: GATTDatabase.Characteristic, end: UInt16) {
            usedChars.insert(c.declarationHandle)
            let props = GATTNames.characteristicProperties.flagNames(UInt64(c.properties)).names.joined(separator: ", ")
            var line = "  \(h(c.declarationHandle))  Characteristic  \(c.uuid.gattLabel(.characteristic))  value \(h(c.valueHandle))  [\(props)]"
            if let v = db.values[c.valueHandle] { line += "  = " + valueText(c.uuid, v) }
            lines.append(line)
            for d in descs where d.handle > c.valueHandle && d.handle <= end && !usedDescs.contains(d.handle) {
                usedDescs.insert(d.handle)
                lines.append("    \(h(d.handle))  Descriptor  \(d.uuid.gattLabel(.descriptor))")
            }
        }
        for (si, svc) in services.enumerated() {
            lines.append("\(h(svc.handle))  \(svc.primary ? "Primary Service" : "Secondary Service")  \(svc.uuid.gattLabel(.service))  \(h(svc.handle))–\(h(svc.endHandle))")
            for inc in db.includes.values.sorted(by: { $0.handle < $1.handle }) where inc.handle > svc.handle && inc.handle <= svc.endHandle {
                lines.append("  \(h(inc.handle))  Include  \(h(inc.range.start))–\(h(inc.range.end))" + (inc.uuid.map { "  " + $0.displayName } ?? ""))
            }
            let inService = chars.filter { $0.declarationHandle > svc.handle && $0.declarationHandle <= svc.endHandle }
            for (i, c) in inService.enumerated() {
                let next = i + 1 < inService.count ? inService[i + 1].declarationHandle - 1 : svc.endHandle
                characteristicLines(c, end: next)
            }
            _ = si
        }
        let orphans = chars.filter { !usedChars.contains($0.declarationHandle) }
        if !orphans.isEmpty { lines.append("(characteristics outside any discovered service)") }
        for (i, c) in orphans.enumerated() {
            characteristicLines(c, end: i + 1 < orphans.count ? orphans[i + 1].declarationHandle - 1 : 0xFFFF)
        }
        let loose = descs.filter { !usedDescs.contains($0.handle) }
        for d in loose { lines.append("  \(h(d.handle))  Attribute  \(d.uuid.displayName)") }
        return lines
    }

    /// A kept value: decoded by the characteristic's value decoder when there is one, else as text
    /// when it is printable, else hex.
    static func valueText(_ uuid: BluetoothUUID, _ bytes: [UInt8]) -> String {
        var decoded: String? = nil
        bytes.withUnsafeBytes { raw in
            var r = ByteReader(raw)
            if let fields = GATTValues.decode(uuid: uuid, &r), !fields.isEmpty {
                let ft = FieldText(options: RenderOptions())
                decoded = fields.map { $0.nameString + ": " + ft.value($0.value) }.joined(separator: ", ")
            }
        }
        if let decoded { return decoded }
        if bytes.count >= 2, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return "\"" + String(decoding: bytes, as: UTF8.self) + "\"" }
        return Hex.string(bytes)
    }

    /// Advertisers: address, names, services, company, RSSI min/median/max, count, interval.
    /// - Parameter only: the advertisers to list (`adv --peer`); nil: all.
    public static func advertisers(_ model: SessionModel, only: ((Advertisers.Advertiser) -> Bool)? = nil) -> String {
        let all = model.advertisers.all.filter { only?($0) ?? true }
        if all.isEmpty { return only == nil || model.advertisers.all.isEmpty ? "No advertising reports in this capture.\n" : "No advertising reports from this device.\n" }
        var s = "\(all.count) advertiser\(all.count == 1 ? "" : "s"), \(model.advertisers.totalReports) reports\n\n"
        for a in all {
            s += a.address.description + "  " + a.addressType.describe(a.address) + (a.connectable ? ", connectable" : "")
                + (a.extended ? ", extended" : "") + "\n"
            if let vendor = OUI.vendorBytes(a.address, type: a.addressType, id: .unspecified) {
                s += "  Vendor:      " + String(decoding: vendor, as: UTF8.self) + " (address OUI)\n"
            }
            if !a.names.isEmpty { s += "  Name:        " + a.names.joined(separator: " | ") + "\n" }
            if !a.services.isEmpty { s += "  Services:    " + a.services.map(\.displayName).joined(separator: ", ") + "\n" }
            if !a.companies.isEmpty {
                s += "  Company:     " + a.companies.map { (AssignedNumbers.companyName($0) ?? "Unknown") + " (0x" + Hex.pad($0, 4) + ")" }
                    .joined(separator: ", ") + "\n"
            }
            if let ap = a.appearance { s += "  Appearance:  " + (AssignedNumbers.appearanceName(ap) ?? "Unknown") + " (0x" + Hex.pad(ap, 4) + ")\n" }
            if let tx = a.txPower { s += "  TX power:    \(tx) dBm\n" }
            if let lo = a.rssiMin, let med = a.rssiMedian, let hi = a.rssiMax { s += "  RSSI:        \(lo) / \(med) / \(hi) dBm (min / median / max)\n" }
            var count = "  Reports:     \(a.reports)"
            if a.scanResponses > 0 { count += " (\(a.scanResponses) scan responses)" }
            count += ", " + TimeFormat.duration(a.lastTime - a.firstTime) + " from frame \(a.firstFrame)"
            if let i = a.intervalEstimate { count += ", heard every ~" + TimeFormat.duration(i) }
            s += count + "\n"
            for m in a.malformed { s += "  Malformed:   " + m + "\n" }
            s += "\n"
        }
        return s
    }
}
