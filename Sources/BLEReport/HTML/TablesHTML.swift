import BLEBytes
import BLEProtocol
import BLECapture
import BLEAnalysis

/// The GATT table per server, the advertisers table and the capture details.
enum TablesHTML {
    static func gatt(_ model: SessionModel) -> String {
        let dbs = model.databases.values.filter { !$0.isEmpty }.sorted { $0.owner < $1.owner }
        guard !dbs.isEmpty else { return "<p class=\"none\">No GATT discovery in this capture.</p>\n" }
        var s = ""
        for db in dbs.prefix(maxServers) {
            s += "<h3>GATT server \(HTML.escape(SessionText.serverHeading(db)))</h3>\n<table class=\"gatt\"><thead><tr><th>Handle</th><th>Attribute</th>"
            s += "<th>UUID / name</th><th>Value handle</th><th>Properties</th><th>Value</th></tr></thead><tbody>\n"
            let chars = db.characteristics.values.sorted { $0.declarationHandle < $1.declarationHandle }
            let descs = db.descriptors.values.sorted { $0.handle < $1.handle }
            var rows: [(UInt16, String)] = []
            for svc in db.services.values {
                rows.append((svc.handle, row(svc.handle, svc.primary ? "Primary Service" : "Secondary Service", svc.uuid.gattLabel(.service),
                                             "", "", "0x\(Hex.pad(svc.handle, 4))–0x\(Hex.pad(svc.endHandle, 4))", cls: "svc")))
            }
            for c in chars {
                let props = GATTNames.characteristicProperties.flagNames(UInt64(c.properties)).names.joined(separator: ", ")
                let value = db.values[c.valueHandle].map { SessionText.valueText(c.uuid, $0) } ?? ""
                rows.append((c.declarationHandle, row(c.declarationHandle, "Characteristic", c.uuid.gattLabel(.characteristic),
                                                      Hex.code(c.valueHandle, 4), props, value, cls: "chr")))
            }
            for d in descs {
                rows.append((d.handle, row(d.handle, "Descriptor", d.uuid.gattLabel(.descriptor), "", "", "", cls: "dsc")))
            }
            for inc in db.includes.values {
                rows.append((inc.handle, row(inc.handle, "Include", inc.uuid?.displayName ?? "", "", "",
                                             "0x\(Hex.pad(inc.range.start, 4))–0x\(Hex.pad(inc.range.end, 4))", cls: "dsc")))
            }
            for r in rows.sorted(by: { $0.0 < $1.0 }) { s += r.1 }
            s += "</tbody></table>\n"
        }
        if dbs.count > maxServers { s += "<p class=\"hint\">… \(dbs.count - maxServers) more GATT servers, not listed (see <code>bleanalyze gatt</code>).</p>\n" }
        return s
    }

    /// GATT servers listed (a capture of thousands of peers would otherwise list each).
    static let maxServers = 100

    static func row(_ handle: UInt16, _ kind: String, _ name: String, _ valueHandle: String, _ props: String, _ value: String,
                    cls: String) -> String {
        "<tr class=\"\(cls)\"><td><code>0x\(Hex.pad(handle, 4))</code></td><td>\(HTML.escape(kind))</td><td>\(HTML.escape(name))</td>"
            + "<td><code>\(HTML.escape(valueHandle))</code></td><td>\(HTML.escape(props))</td><td>\(HTML.escape(value))</td></tr>\n"
    }

    static let maxAdvertisers = 500

    static func advertisers(_ model: SessionModel) -> String {
        let all = model.advertisers.all
        guard !all.isEmpty else { return "<p class=\"none\">No advertising reports in this capture.</p>\n" }
        var s = "<p>\(all.count) advertiser\(all.count == 1 ? "" : "s"), \(model.advertisers.totalReports) reports.</p>\n"
        s += "<table class=\"adv\"><thead><tr><th>Address</th><th>Type</th><th>Name</th><th>Services</th><th>Company</th>"
        s += "<th>RSSI min / median / max</th><th>Reports</th><th>Heard every</th><th>Problems</th></tr></thead><tbody>\n"
        for a in all.prefix(maxAdvertisers) {
            var type = a.addressType.describe(a.address)
            if a.connectable { type += ", connectable" }
            if a.extended { type += ", extended" }
            let companies = a.companies.map { (AssignedNumbers.companyName($0) ?? "Unknown") + " (0x" + Hex.pad($0, 4) + ")" }
            let rssi = [a.rssiMin, a.rssiMedian, a.rssiMax].compactMap { $0 }.map(String.init).joined(separator: " / ")
            let cells = [a.address.description, type, a.names.joined(separator: " | "), a.services.map(\.displayName).joined(separator: ", "),
                         companies.joined(separator: ", "), rssi.isEmpty ? "" : rssi + " dBm",
                         "\(a.reports)" + (a.scanResponses > 0 ? " (\(a.scanResponses) scan resp.)" : ""),
                         a.intervalEstimate.map { "~" + TimeFormat.duration($0) } ?? "", a.malformed.joined(separator: "; ")]
            s += "<tr" + (a.malformed.isEmpty ? "" : " class=\"sev-warning\"") + ">" + cells.map { "<td>\(HTML.escape($0))</td>" }.joined() + "</tr>\n"
        }
        if all.count > maxAdvertisers { s += "<tr><td colspan=\"9\">… \(all.count - maxAdvertisers) more (see <code>bleanalyze adv</code>)</td></tr>\n" }
        return s + "</tbody></table>\n"
    }

    static func capture(_ facts: CaptureFacts) -> String {
        var rows: [(String, String)] = [("File", facts.path), ("Format", facts.info.format.rawValue + (facts.info.compressed ? ", gzip-compressed" : "")),
                                        ("Datalink", "\(facts.info.datalink) \(facts.info.datalinkName)"),
                                        ("Frames", "\(facts.summary.frames)" + (facts.summary.truncated ? " (the file ends inside a record)" : "")),
                                        ("Malformed", "\(facts.statistics.malformed)")]
        if let reason = facts.info.notDecodedReason { rows.append(("Decoding", reason)) }
        if let a = facts.summary.firstTimestamp, let b = facts.summary.lastTimestamp {
            rows.append(("First frame", TimeFormat.dateTime(a) + " UTC"))
            rows.append(("Last frame", TimeFormat.dateTime(b) + " UTC"))
        }
        for a in facts.adapters {
            rows.append(("Adapter", (["hci\(a.index)"] + [a.address, a.name, a.bus, a.manufacturer].compactMap { $0 }).joined(separator: "  ")))
        }
        let kinds = FrameKind.allCases.filter { facts.statistics.count($0) > 0 }
        if !kinds.isEmpty { rows.append(("Packet types", kinds.map { "\($0.name) \(facts.statistics.count($0))" }.joined(separator: ", "))) }
        for i in facts.summary.issues { rows.append(("Issue", i.description)) }
        for m in facts.statistics.malformedExamples.prefix(10) { rows.append(("Malformed", "frame \(m.frame) at offset \(m.offset): \(m.reason)")) }
        return "<table class=\"kv\"><tbody>\n" + rows.map { "<tr><th>\(HTML.escape($0.0))</th><td>\(HTML.escape($0.1))</td></tr>\n" }.joined()
            + "</tbody></table>\n"
    }
}
