import BLEAnalysis
import BLECapture
import Foundation
import TestSupport
import Testing

/// `redact --drop-values` and what the summary says about kept ATT values: the app's own data.
@Suite struct RedactValuesTests {
    static let tshark = Tool.available("tshark", ["-v"])
    static let pongbot = Fixtures.repoRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/captures/real/android_pongbot_prepwrite_indicate.btsnoop").path
    static let healthy = Fixtures.repoRoot.appendingPathComponent("captures/healthy.btsnoop").path

    /// With every app value replaced, the findings (rule, severity, connection, frames), the ATT
    /// opcode counts and the malformed frames are those of the original, for every capture.
    @Test(arguments: RedactTests.inputs)
    func dropValuesKeepsFindings(path: String) throws {
        let name = URL(fileURLWithPath: path).lastPathComponent
        let out = Fixtures.temporary("values-" + name)
        try Redactor.redact(input: path, output: out, options: RedactionOptions(dropValues: true))
        let before = try AnalysisFacts(path), after = try AnalysisFacts(out)
        let lost = before.findings.subtracting(after.findings), gained = after.findings.subtracting(before.findings)
        #expect(lost.isEmpty && gained.isEmpty, "\(name): lost \(lost), gained \(gained)")
        #expect(after.attOpcodes == before.attOpcodes, "\(name)")
        #expect(after.malformed == before.malformed, "\(name)")
    }

    /// tshark reads the copy: every notification value is replaced by one of the same length, equal
    /// values by equal ones and different by different (the n-th distinct value becomes n), and the
    /// discovery responses and CCCD writes are unchanged.
    @Test(.enabled(if: RedactValuesTests.tshark, "tshark is not installed"))
    func valuesAreReplacedDiscoveryAndCCCDsStay() throws {
        let out = Fixtures.temporary("values-tshark.btsnoop")
        let summary = try Redactor.redact(input: Self.healthy, output: out, options: RedactionOptions(dropValues: true))
        #expect(summary.droppedValues > 0)
        func fields(_ path: String, _ filter: String, _ fields: [String]) -> [String] {
            let args = ["-r", path, "-Y", filter, "-T", "fields"] + fields.flatMap { ["-e", $0] }
            return (Fixtures.tool("tshark", args) ?? "").split(separator: "\n").map(String.init)
        }
        /// The ATT PDUs (hex) tshark shows for `filter` (its JSON `btatt_raw`: Heart Rate values get
        /// named fields, not `btatt.value`).
        func rawATT(_ path: String, _ filter: String) -> [String] {
            let json = Fixtures.tool("tshark", ["-r", path, "-Y", filter, "-T", "json", "-x", "-j", "btatt"]) ?? ""
            var out: [String] = []
            var lines = json.split(separator: "\n").makeIterator()
            while let line = lines.next() {
                if line.contains("\"btatt_raw\""), let hex = lines.next() {
                    out.append(hex.trimmingCharacters(in: CharacterSet(charactersIn: " \",")))
                }
            }
            return out
        }
        let notify = "btatt.opcode == 0x1b"
        let before = rawATT(Self.healthy, notify), after = rawATT(out, notify)
        #expect(before.count >= 10, "the original notifies")
        #expect(after.count == before.count)
        var mapping: [String: String] = [:]
        var changed = 0
        for (b, a) in zip(before, after) {
            // Opcode and handle (6 hex digits) kept; the value has the same length.
            #expect(a.count == b.count && a.prefix(6) == b.prefix(6), "\(b) → \(a)")
            let vb = String(b.dropFirst(6)), va = String(a.dropFirst(6))
            if let known = mapping[vb] { #expect(known == va, "\(vb) replaced two ways") }
            mapping[vb] = va
            if va != vb { changed += 1 }
        }
        #expect(Set(mapping.values).count == mapping.count, "different values stay different")
        #expect(changed > before.count / 2, "the values are replaced")
        let discovery = "btatt.opcode == 0x11 || btatt.opcode == 0x09 || btatt.opcode == 0x05"
        let discoveryFields = ["frame.number", "btatt.handle", "btatt.uuid16", "btatt.uuid128", "btatt.characteristic_properties"]
        #expect(fields(out, discovery, discoveryFields) == fields(Self.healthy, discovery, discoveryFields))
        #expect(!fields(Self.healthy, discovery, discoveryFields).isEmpty)
        let cccd = "btatt.opcode == 0x12 && btatt.characteristic_configuration_client"
        let cccdBefore = rawATT(Self.healthy, cccd)
        #expect(!cccdBefore.isEmpty)
        #expect(rawATT(out, cccd) == cccdBefore)
    }

    /// The issue's case: the app writes its serial number (part of the advertised name) into its own
    /// ATT data. The serial goes with the name; the rest of the string is listed as kept, with its
    /// handle and first frame, as tshark reads them.
    @Test(.enabled(if: RedactValuesTests.tshark && FileManager.default.fileExists(atPath: RedactValuesTests.pongbot), "tshark or the real corpus is missing"))
    func serialInAppDataIsReplacedAndTheRestListed() throws {
        let frame = 779
        guard let line = Fixtures.tool("tshark", ["-r", Self.pongbot, "-Y", "frame.number == \(frame)", "-T", "fields", "-e", "btatt.handle", "-e", "btatt.value"]),
              let names = Fixtures.tool("tshark", ["-r", Self.pongbot, "-Y", "btcommon.eir_ad.entry.device_name", "-T", "fields", "-e", "btcommon.eir_ad.entry.device_name"])
        else { Issue.record("tshark cannot read \(Self.pongbot)"); return }
        let parts = line.split(separator: "\t").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        guard parts.count == 2, let handle = UInt16(parts[0].dropFirst(2), radix: 16) else { Issue.record("no ATT value in frame \(frame): \(line)"); return }
        let value = stride(from: 0, to: parts[1].count - 1, by: 2).compactMap { i -> UInt8? in
            let s = parts[1].index(parts[1].startIndex, offsetBy: i)
            return UInt8(parts[1][s ..< parts[1].index(s, offsetBy: 2)], radix: 16)
        }
        // The longest printable run of the value, and the serial: a token of an advertised name inside it.
        let text = String(decoding: value.split { $0 < 0x20 || $0 > 0x7E }.max { $0.count < $1.count } ?? [], as: UTF8.self)
        let tokens = Set(names.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init))
        guard let serial = tokens.filter({ $0.count >= 6 && $0.filter(\.isNumber).count >= 3 && text.contains($0) }).max(by: { $0.count < $1.count }) else {
            Issue.record("no advertised name's serial in \"\(text)\""); return
        }

        let out = Fixtures.temporary("pongbot-redacted.btsnoop")
        let summary = try Redactor.redact(input: Self.pongbot, output: out)
        #expect(summary.identifierFields > 0)
        let copy = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
        #expect(!copy.contains(bytes: Array(serial.utf8)), "\(serial) is still in the copy")
        let rest = text.components(separatedBy: serial).last ?? ""
        let listed = summary.keptStrings.first { $0.handle == handle && $0.text.hasSuffix(rest) && $0.text.count == text.count }
        #expect(listed != nil, "\(text) at handle \(handle) not listed: \(summary.keptStrings.prefix(5).map(\.text))")
        #expect(listed?.firstFrame == frame)
        #expect(listed.map { !$0.text.contains(serial) } ?? false)
        #expect(summary.keptValues > 0)

        // With --keep-names the serial stays, and is listed as it is.
        let kept = try Redactor.redact(input: Self.pongbot, output: Fixtures.temporary("pongbot-kept.btsnoop"), options: RedactionOptions(keepNames: true))
        #expect(kept.keptStrings.contains { $0.text == text && $0.handle == handle })
        #expect(kept.identifierFields == 0)

        // With --drop-values nothing of it is left.
        let dropped = try Redactor.redact(input: Self.pongbot, output: Fixtures.temporary("pongbot-dropped.btsnoop"), options: RedactionOptions(dropValues: true))
        #expect(!dropped.keptStrings.contains { $0.handle == handle })
        let droppedCopy = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.temporary("pongbot-dropped.btsnoop"))))
        #expect(!droppedCopy.contains(bytes: Array(rest.utf8)), "\(rest) is still in the --drop-values copy")
    }
}
