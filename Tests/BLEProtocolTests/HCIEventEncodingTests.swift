import BLEBytes
import Testing
@testable import BLEProtocol

/// Events laid out from the decoding tables (`HCIEventEncoding`), the ACL packet encoder, and the
/// reassembler's view of a PDU in progress: what the LL air adapter builds on.
@Suite("HCI event encoding")
struct HCIEventEncodingTests {
    /// The ADV_IND of bsniffhub's connection-update.pcap frame 1 (`LinkLayerTests.advInd`: AdvA
    /// 04:EE:03:4A:8B:38 public, AD "PairingTest" + Flags, RSSI −51) as the LE Advertising Report a
    /// scanning host would get. Layout from Core v5.4 Vol 4 Part E 7.7.65.2: Subevent_Code 0x02,
    /// Num_Reports, Event_Type, Address_Type, Address, Data_Length, Data, RSSI.
    @Test("LE Advertising Report from the LE meta table's row, byte for byte, and decoded back")
    func advertisingReport() throws {
        let ad = HCITest.bytes("0c0950616972696e6754657374 020106")
        let address = BDAddr(0x04EE_034A_8B38)
        let report: [ParamKey: HCIEventEncoding.Value] = [
            ParamKey("Event_Type"): .int(0), ParamKey("Address_Type"): .int(0), ParamKey("Address"): .address(address),
            ParamKey("Data"): .lengthPrefixed(ad), ParamKey("RSSI"): .int(UInt64(UInt8(bitPattern: -51))),
        ]
        let e = try HCIEventEncoding.leMeta(0x02, [ParamKey("Num_Reports"): .list([report])])
        #expect(e == HCITest.bytes("3e 1c 02 01 00 00 388b4a03ee04 10 0c0950616972696e6754657374020106 cd"))
        guard case let .advertisingReports(reports) = try HCITest.typedEvent(e) else { Issue.record("not an advertising report"); return }
        var seen: [AdvertisingReport] = []
        e.withUnsafeBytes { b in reports.forEach(in: b, base: 0) { seen.append($0) } }
        #expect(seen.count == 1)
        #expect(seen.first?.address == address && seen.first?.rssi == -51 && seen.first?.eventType == 0)
        #expect(seen.first?.data == ByteRange(offset: 13, count: ad.count))
    }

    /// Number Of Completed Packets (7.7.19): Num_Handles, then handle and count per entry.
    @Test("Number Of Completed Packets from the event table's row")
    func completedPackets() throws {
        let e = try HCIEventEncoding.event(0x13, [ParamKey("Num_Handles"): .list([[ParamKey("Connection_Handle"): .int(0x0041), ParamKey("Num_Completed_Packets"): .int(1)],
                                                                    [ParamKey("Connection_Handle"): .int(0x0EFF), ParamKey("Num_Completed_Packets"): .int(0x0102)]])])
        #expect(e == HCITest.bytes("13 09 02 4100 0100 ff0e 0201"))
        guard case let .numberOfCompletedPackets(pairs) = try HCITest.typedEvent(e) else { Issue.record("not NOCP"); return }
        var seen: [(UInt16, UInt16)] = []
        e.withUnsafeBytes { b in pairs.forEach(in: b, base: 0) { seen.append(($0, $1)) } }
        #expect(seen.map(\.0) == [0x0041, 0x0EFF] && seen.map(\.1) == [1, 0x0102])
    }

    @Test("a parameter left out, a value of the wrong shape, an unknown event: errors, not zeros")
    func failures() {
        #expect(throws: HCIEventEncoding.Failure.missingParameter("Num_Completed_Packets")) {
            try HCIEventEncoding.event(0x13, [ParamKey("Num_Handles"): .list([[ParamKey("Connection_Handle"): .int(1)]])])
        }
        #expect(throws: HCIEventEncoding.Failure.unsupportedSpec("Num_Handles")) {
            try HCIEventEncoding.event(0x13, [ParamKey("Num_Handles"): .int(1)])
        }
        #expect(throws: HCIEventEncoding.Failure.unsupportedSpec("Connection_Handle")) {
            try HCIEventEncoding.event(0x13, [ParamKey("Num_Handles"): .list([[ParamKey("Connection_Handle"): .lengthPrefixed([1]), ParamKey("Num_Completed_Packets"): .int(1)]])])
        }
        #expect(throws: HCIEventEncoding.Failure.unknownEvent(code: 0x3E, subevent: 0xEE)) { try HCIEventEncoding.leMeta(0xEE, [:]) }
    }

    /// ACL header (Vol 4 Part E 5.4.2): handle in bits 0–11, Packet_Boundary_Flag in 12–13.
    @Test("ACL packet: handle, boundary flag, length, data")
    func aclPacket() {
        #expect(L2CAPEncoding.aclPacket(handle: 0x0041, boundary: ACLHeader.firstFlushable, [0x05, 0x00, 0x04, 0x00, 0x0A])
                == HCITest.bytes("4120 0500 050004000a"))
        #expect(L2CAPEncoding.aclPacket(handle: 0x0EFF, boundary: ACLHeader.continuing, [0xAA]) == HCITest.bytes("ff1e 0100 aa"))
        #expect(L2CAPEncoding.aclPackets(handle: 1, pdu: [1, 2, 3], maxLength: 2) == [HCITest.bytes("0100 0200 0102"), HCITest.bytes("0110 0100 03")])
    }

    @Test("the reassembler tells how far a PDU in progress has come, and forgets it once complete")
    func inProgress() throws {
        var reassembler = L2CAPReassembler()
        let key = L2CAPReassembler.Key(adapter: 0, handle: 1, received: true)
        let other = L2CAPReassembler.Key(adapter: 0, handle: 1, received: false)
        let start: [UInt8] = [0x06, 0x00, 0x04, 0x00, 0x0B, 0x01]   // 10 bytes announced, 6 here
        var delivered = 0
        start.withUnsafeBytes { b in
            reassembler.push(key, isStart: true, data: ByteReader(b, base: 100), frame: 7) { _, _ in delivered += 1 }
        }
        #expect(reassembler.inProgress(key) == L2CAPReassembler.Progress(firstFrame: 7, have: 6, expected: 10))
        #expect(reassembler.inProgress(other) == nil)
        // Another link's start moves this one out of the hot slot: still found.
        [UInt8]([0x04, 0x00, 0x04, 0x00, 0x0A]).withUnsafeBytes { b in
            reassembler.push(other, isStart: true, data: ByteReader(b, base: 200), frame: 8) { _, _ in delivered += 1 }
        }
        #expect(reassembler.inProgress(key) == L2CAPReassembler.Progress(firstFrame: 7, have: 6, expected: 10))
        #expect(reassembler.inProgress(other)?.have == 5)
        [UInt8]([0x02, 0x03, 0x04, 0x05]).withUnsafeBytes { b in
            reassembler.push(key, isStart: false, data: ByteReader(b, base: 300), frame: 9) { _, _ in delivered += 1 }
        }
        #expect(delivered == 1)
        #expect(reassembler.inProgress(key) == nil)
    }

    // MARK: keys, not labels (issue 26)

    /// Every `ParamKey` is unique within its parameter list (at every nesting level) and spelled
    /// as a Core specification parameter name (`Connection_Handle`), never as a display label.
    @Test("parameter keys are unique per parameter list and spelled as spec names")
    func keysAreUniqueSpecNames() {
        func check(_ params: [Param], _ row: String) {
            let keys = params.compactMap(\.key)
            #expect(Set(keys).count == keys.count, "duplicate key in \(row): \(keys)")
            for k in keys {
                let ok = !k.rawValue.isEmpty && !k.rawValue.contains(" ") && k.rawValue.first?.isUppercase == true
                #expect(ok, "\(row): key \(k) is not a spec parameter name")
            }
            for p in params {
                switch p.spec {
                case let .group(sub), let .counted(_, sub), let .repeated(sub), let .parallel(sub): check(sub, "\(row) / \(p.name)")
                default: break
                }
            }
        }
        var keyed = 0
        for (table, rows) in [("command", HCIDecoder.commands.entries), ("event", HCIDecoder.events.entries), ("LE meta", HCIDecoder.leMeta.entries)] {
            for row in rows {
                check(row.parameters, "\(table) \(row.name)")
                check(row.returns ?? [], "\(table) \(row.name) returns")
                keyed += row.parameters.filter { $0.key != nil }.count
            }
        }
        #expect(keyed >= 40, "only \(keyed) keyed parameters: the rows the encoders use lost their keys")
    }

    /// Renaming every label of a row changes nothing the encoder writes: it reads keys only. The row
    /// of LE Connection Complete with each label replaced encodes the same bytes as the table's row;
    /// a row whose parameter has no key cannot be encoded (never silently by label).
    @Test("renaming display labels cannot change an encoding")
    func labelsAreNotKeys() throws {
        let row = try #require(HCIDecoder.leMeta[UInt16(LESubevent.connectionComplete)])
        // The same row with every label replaced: ids, specs and keys kept.
        let relabelled = row.parameters.map { Param(id: $0.id, name: "Renamed", spec: $0.spec, key: $0.key) }
        let values: [ParamKey: HCICommandEncoding.Value] = [
            ParamKey("Status"): .int(0), ParamKey("Connection_Handle"): .int(0x0042), ParamKey("Role"): .int(1),
            ParamKey("Peer_Address_Type"): .int(0), ParamKey("Peer_Address"): .address(BDAddr(0x1122_3344_5566)),
            ParamKey("Connection_Interval"): .int(24), ParamKey("Peripheral_Latency"): .int(0),
            ParamKey("Supervision_Timeout"): .int(500), ParamKey("Central_Clock_Accuracy"): .int(1),
        ]
        var a = ByteWriter(), b = ByteWriter()
        try HCICommandEncoding.write(row.parameters, values, into: &a)
        try HCICommandEncoding.write(relabelled, values, into: &b)
        #expect(a.bytes == b.bytes && a.bytes.count == 18)
        #expect(try HCIEventEncoding.leMeta(LESubevent.connectionComplete, values) == [0x3E, 19, 0x01] + a.bytes)
        // A label is no key: the table's own label for the handle does not find its value.
        #expect(throws: HCICommandEncoding.Failure.missingParameter("Connection_Handle")) {
            var w = ByteWriter()
            try HCICommandEncoding.write(row.parameters, values.filter { $0.key != ParamKey("Connection_Handle") }
                .merging([ParamKey("Handle"): .int(0x0042)]) { x, _ in x }, into: &w)
        }
        #expect(throws: HCICommandEncoding.Failure.unkeyedParameter("Renamed")) {
            var w = ByteWriter()
            try HCICommandEncoding.write([Param("Renamed", .uint(1))], [:], into: &w)
        }
    }
}
