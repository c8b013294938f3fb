import BLEAnalysis
import BLECapture
import Foundation
import TestSupport
import Testing

/// `Connection.transfer` (`connections[].transfer` in the JSON report): the PDUs carrying an attribute
/// value and the sum of their value lengths, per connection and direction, equal what tshark's frames
/// give on every real HCI capture. tshark's side: one line per frame with ATT (`-Y btatt`), the ATT
/// opcodes of the frame and the L2CAP length of each PDU (a reassembled PDU counts once, at the frame
/// that completes it); the value length is the L2CAP length less the PDU's other fields (Core v5.4
/// Vol 3 Part F 3.4.5, 3.4.6.1, 3.4.7: opcode and handle 3, Prepare Write 5, Signed Write 3 + 12-byte
/// signature; Multiple Handle Value Notification: the sum of its pairs' `btatt.length`). A frame is
/// given to the connection of its handle that was open then (handles are reused). Frames the capture
/// cut (btsnooz: `frame.cap_len < frame.len`) carry no decidable value and are left out on both sides.
@Suite(.enabled(if: AnalysisFixtures.sharedReal != nil, "../shared/captures/real is absent"))
struct TransferCountTests {
    struct Key: Hashable, Comparable, CustomStringConvertible {
        var connection: Int
        var sent: Bool
        static func < (a: Key, b: Key) -> Bool { (a.connection, a.sent ? 0 : 1) < (b.connection, b.sent ? 0 : 1) }
        var description: String { "conn \(connection) \(sent ? "sent" : "received")" }
    }
    struct Count: Equatable, CustomStringConvertible {
        var pdus = 0
        var bytes = 0
        var description: String { "\(pdus) PDUs \(bytes) bytes" }
    }

    /// ATT opcodes of the PDUs that carry an attribute value, with their bytes besides the value.
    static let overhead: [Int: Int] = [0x12: 3, 0x52: 3, 0x1B: 3, 0x1D: 3, 0x16: 5, 0xD2: 15]

    static func realCaptures() -> [String] {
        guard let dir = AnalysisFixtures.sharedReal,
              let names = try? FileManager.default.contentsOfDirectory(atPath: dir.path) else { return [] }
        return names.filter { !$0.hasSuffix(".md") && $0 != "SHA256SUMS" }.sorted().map { dir.appendingPathComponent($0).path }
    }

    @Test(.enabled(if: Tool.available("tshark", ["-v"]), "tshark is not installed"))
    func pdusAndBytesMatchTshark() throws {
        var problems: [String] = []
        var checked = 0, pdus = 0
        for path in Self.realCaptures() {
            let (analyzer, _, info) = try AnalysisFixtures.analyzeWithInfo(path)
            if info.notDecodedReason != nil || Datalink.isAirCapture(info.datalink) { continue }   // HCI captures only
            let fields = ["frame.number", "frame.p2p_dir", "packetlogger.type", "hci_mon.opcode", "hci_mon.adapter_id",
                          "bthci_acl.chandle", "btatt.opcode", "btl2cap.length", "btatt.length", "frame.cap_len", "frame.len"]
            guard let out = AnalysisFixtures.run("tshark", ["-r", path, "-Y", "btatt && !(bthci_acl.chandle == 0x0edc)", "-T", "fields",
                                                           "-E", "occurrence=a", "-E", "aggregator=,"] + fields.flatMap { ["-e", $0] }) else {
                problems.append("tshark failed on \(path)"); continue
            }
            let connections = analyzer.session.connections
            var theirs: [Key: Count] = [:]
            for line in out.split(separator: "\n", omittingEmptySubsequences: true) {
                let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                guard f.count == fields.count, let frame = Int(f[0]) else { continue }
                if let cap = Int(f[9]), let len = Int(f[10]), cap < len { continue }
                // Direction: btsnoop's flags (p2p_dir 0 = sent), PacketLogger's type (0x02 ACL sent),
                // the Linux monitor's opcode (4 = ACL TX packet, 5 = ACL RX; tshark prints it in decimal).
                let sent: Bool
                if !f[1].isEmpty { sent = f[1] == "0" } else if !f[2].isEmpty { sent = f[2] == "0x02" } else if let op = Int(f[3]) { sent = op == 4 } else { continue }
                let adapter = Int(f[4]) ?? 0
                guard let handle = Int(f[5].split(separator: ",").first.map { $0.dropFirst(2) } ?? "", radix: 16) else { continue }
                let opcodes = f[6].split(separator: ",").compactMap { Int($0.dropFirst(2), radix: 16) }
                let lengths = f[7].split(separator: ",").compactMap { Int($0) }
                let pairLengths = f[8].split(separator: ",").compactMap { Int($0) }
                // The connection of this handle open at this frame: the last one that began at or before it
                // (its set-up, or for a link with no set-up its first event: a handle reused by a new
                // session of an ACL-only export is a new connection, issue 24).
                guard let c = connections.last(where: {
                    Int($0.adapter) == adapter && Int($0.handle) == handle && ($0.lifecycle.completeFrame ?? $0.timeline.first?.frame ?? 0) <= frame
                        && ($0.lifecycle.disconnectFrame ?? Int.max) >= frame
                }) else { continue }
                // L2CAP lengths and ATT opcodes pair up in order when one frame holds several PDUs.
                for (i, op) in opcodes.enumerated() {
                    let value: Int
                    if op == 0x23 { value = pairLengths.reduce(0, +) } else if let o = Self.overhead[op], i < lengths.count { value = lengths[i] - o } else { continue }
                    theirs[Key(connection: c.index, sent: sent), default: Count()].pdus += 1
                    theirs[Key(connection: c.index, sent: sent), default: Count()].bytes += value
                }
            }
            var ours: [Key: Count] = [:]
            for c in connections {
                for (sent, d) in [(true, c.transfer.sent), (false, c.transfer.received)] where d.pdus > 0 {
                    ours[Key(connection: c.index, sent: sent)] = Count(pdus: d.pdus, bytes: d.bytes)
                }
            }
            for key in Set(ours.keys).union(theirs.keys).sorted() where ours[key] != theirs[key] {
                problems.append("\((path as NSString).lastPathComponent) \(key): ours \(ours[key] ?? Count()), tshark \(theirs[key] ?? Count())")
            }
            pdus += theirs.values.reduce(0) { $0 + $1.pdus }
            checked += 1
        }
        #expect(problems.isEmpty, "\(problems.count) differences:\n\(problems.joined(separator: "\n"))")
        #expect(checked >= 20, "HCI captures checked: \(checked)")
        #expect(pdus >= 10_000, "value-carrying PDUs compared: \(pdus)")
    }
}
