import BLEBytes
import BLEProtocol
@testable import BLEReplay
import Testing

/// Units, rewriting and comparison on hand-made packets (hex commented with their fields).
@Suite struct ScriptTests {
    static func packet(_ frame: Int, fromHost: Bool, _ type: HCIPacketType, _ hex: String) -> RecordedPacket {
        RecordedPacket(frame: frame, timestamp: Int64(frame) * 1000, fromHost: fromHost, packet: H4Packet(type, Hex.bytes(hex) ?? []))
    }

    @Test func aclFragmentsBecomeOneL2CAPUnit() {
        let recording = Recording(packets: [
            // ACL handle 1, start, 6 bytes: L2CAP length 5, CID 4, ATT Read Response 0b + "g"
            Self.packet(1, fromHost: false, .acl, "01 20 06 00 05 00 04 00 0b 67"),
            // Number Of Completed Packets between the fragments
            Self.packet(2, fromHost: false, .event, "13 05 01 01 00 01 00"),
            // ACL handle 1, continuation: "old"
            Self.packet(3, fromHost: false, .acl, "01 10 03 00 6f 6c 64"),
            // continuation without a start: kept as a raw unit
            Self.packet(4, fromHost: false, .acl, "02 10 01 00 ff"),
        ])
        let units = Script(recording).units
        #expect(units.count == 3)
        #expect(units[0].frames == [2])
        #expect(units[1].frames == [1, 3])
        guard case let .l2cap(handle, pdu) = units[1].content else { Issue.record("not L2CAP"); return }
        #expect(handle == 1)
        #expect(pdu == Hex.bytes("05 00 04 00 0b 67 6f 6c 64"))
        #expect(units[1].title == "ACL Data RX handle 1 · ATT: Read Response (0x0b)")
        guard case .raw = units[2].content else { Issue.record("not raw"); return }
    }

    /// Fragments that make no PDU come out raw with their packets: a start cut short by the next
    /// start, fragments carrying more than the L2CAP length, a start too short for the header.
    @Test func fragmentsThatMakeNoPDUAreRawUnits() {
        let recording = Recording(packets: [
            // handle 1, start: L2CAP length 5, CID 4, 0b 67 — then a new start before the rest
            Self.packet(1, fromHost: false, .acl, "01 20 06 00 05 00 04 00 0b 67"),
            // handle 1, start: length 1, CID 4, 0b, then 2 bytes too many (overrun)
            Self.packet(2, fromHost: false, .acl, "01 20 07 00 01 00 04 00 0b ee ee"),
            // handle 1, start of 3 bytes (no room for the 4-byte L2CAP header)
            Self.packet(3, fromHost: false, .acl, "01 20 03 00 01 00 04"),
            // handle 2: a PDU in two fragments, still whole
            Self.packet(4, fromHost: false, .acl, "02 20 05 00 02 00 04 00 0b"),
            Self.packet(5, fromHost: false, .acl, "02 10 01 00 67"),
        ])
        let units = Script(recording).units
        #expect(units.map(\.frames) == [[1], [2], [3], [4, 5]])
        for unit in units.prefix(3) {
            guard case .raw = unit.content else { Issue.record("frame \(unit.frames) not raw"); continue }
        }
        guard case let .l2cap(handle, pdu) = units[3].content else { Issue.record("not L2CAP"); return }
        #expect(handle == 2)
        #expect(pdu == Hex.bytes("02 00 04 00 0b 67"))
    }

    @Test func commandsGetLiveHandlesAndMappedAddresses() {
        var maps = LinkMaps()
        maps.learn(recorded: 0x0001, live: 0x0040)
        maps.addresses[BDAddr(string: "C0:5E:1A:00:00:02") ?? BDAddr(0)] = BDAddr(string: "D0:11:22:33:44:55") ?? BDAddr(0)
        // Disconnect: handle 1, reason 0x13
        #expect(HostRewriter.command(Hex.bytes("06 04 03 01 00 13") ?? [], maps: maps) == Hex.bytes("06 04 03 40 00 13"))
        // LE Create Connection: scan 0x60/0x60, filter 0, peer type 1, peer C0:5E:1A:00:00:02, own 1, intervals…
        let create = Hex.bytes("0d 20 19 60 00 60 00 00 01 02 00 00 1a 5e c0 01 0c 00 18 00 00 00 48 00 00 00 00 00") ?? []
        let rewritten = HostRewriter.command(create, maps: maps)
        #expect(Array(rewritten[9 ..< 15]) == [0x55, 0x44, 0x33, 0x22, 0x11, 0xD0])
        #expect(Array(rewritten[15...]) == Array(create[15...]))
        // Host Number Of Completed Packets: 2 handles (1: 3 packets, 2: 1 packet); handle 2 is not mapped
        #expect(HostRewriter.command(Hex.bytes("35 0c 09 02 01 00 03 00 02 00 01 00") ?? [], maps: maps)
                == Hex.bytes("35 0c 09 02 40 00 03 00 02 00 01 00"))
        var requested = LinkMaps()
        HostRewriter.noteIntervalRequest(UnitView(LinkUnit(content: .command(create), packets: [], frames: [], timestamp: 0, fromHost: true)), maps: &requested)
        #expect(requested.pendingIntervalRange == 0x0C ... 0x18)
    }

    @Test func aclIsSplitToTheLiveBufferSize() {
        var maps = LinkMaps()
        maps.learn(recorded: 1, live: 2)
        // handle 1, first automatically flushable, 9 bytes
        let packet = H4Packet(.acl, Hex.bytes("01 20 09 00 05 00 04 00 0b 67 6f 6c 64") ?? [])
        let pieces = HostRewriter.acl(packet, maps: maps, maxLength: 4)
        #expect(pieces.map(\.bytes) == [
            Hex.bytes("02 20 04 00 05 00 04 00"), Hex.bytes("02 10 04 00 0b 67 6f 6c"), Hex.bytes("02 10 01 00 64"),
        ].map { $0 ?? [] })
        #expect(HostRewriter.acl(packet, maps: maps, maxLength: 27).map(\.bytes) == [Hex.bytes("02 20 09 00 05 00 04 00 0b 67 6f 6c 64") ?? []])
    }

    @Test func ruleSets() throws {
        let defaults = RuleSet()
        #expect(defaults.isRelaxed(ReplayRules.rssi))
        #expect(!defaults.isRelaxed(ReplayRules.unexpected))
        let strict = try RuleSet(ignore: [ReplayRules.attValue], strict: ["all"])
        #expect(strict.relaxed == [ReplayRules.attValue])
        #expect(throws: RuleError.self) { try RuleSet(ignore: ["rsi"], strict: []) }
    }

    static func view(_ type: HCIPacketType, _ hex: String, fromHost: Bool = false) -> UnitView {
        let bytes = Hex.bytes(hex) ?? []
        let content: LinkUnit.Content = type == .command ? .command(bytes) : .event(bytes)
        return UnitView(LinkUnit(content: content, packets: [H4Packet(type, bytes)], frames: [1], timestamp: 0, fromHost: fromHost))
    }

    @Test func comparatorAppliesTheRules() {
        let comparator = Comparator(rules: RuleSet())
        var maps = LinkMaps()
        // LE Connection Complete: status 0, handle 1, central, random C0:5E:1A:00:00:02, interval 0x0c, latency 0, timeout 0x48, SCA 0
        let recorded = Self.view(.event, "3e 13 01 00 01 00 00 01 02 00 00 1a 5e c0 0c 00 00 00 48 00 00")
        // live: handle 0x40, interval 0x10, clock accuracy 5
        let live = Self.view(.event, "3e 13 01 00 40 00 00 01 02 00 00 1a 5e c0 10 00 00 00 48 00 05")
        maps.pendingIntervalRange = 0x0C ... 0x18
        #expect(comparator.differences(expected: recorded, actual: live, maps: maps).isEmpty)
        maps.pendingIntervalRange = 0x0C ... 0x0E
        #expect(comparator.differences(expected: recorded, actual: live, maps: maps).map(\.field) == ["Connection Interval"])
        let strict = Comparator(rules: (try? RuleSet(ignore: [], strict: ["all"])) ?? RuleSet())
        #expect(Set(strict.differences(expected: recorded, actual: live, maps: maps).map(\.field)) == ["Connection Interval", "Central Clock Accuracy"])

        // Disconnection Complete on the mapped handle
        maps.learn(recorded: 1, live: 0x40)
        let disconnected = Self.view(.event, "05 04 00 01 00 13")
        #expect(comparator.differences(expected: disconnected, actual: Self.view(.event, "05 04 00 40 00 13"), maps: maps).isEmpty)
        #expect(comparator.differences(expected: disconnected, actual: Self.view(.event, "05 04 00 40 00 16"), maps: maps).map(\.field) == ["Reason"])

        // Command Status instead of Command Complete for Reset: one difference, the event itself
        let complete = Self.view(.event, "0e 04 01 03 0c 00")
        let status = Self.view(.event, "0f 04 01 01 03 0c")
        let d = comparator.differences(expected: complete, actual: status, maps: maps)
        #expect(d.count == 1)
        #expect(d.first?.actual.contains("Command Status") == true)
        #expect(MatchKey(complete, handle: { $0 }) == MatchKey(status, handle: { $0 }))

        // Read Local Version Information: only the Status is compared by default
        let version = Self.view(.event, "0e 0c 01 01 10 00 09 00 00 09 ff ff 00 00")
        let other = Self.view(.event, "0e 0c 01 01 10 00 0c 11 00 0c 0f 00 33 22")
        #expect(comparator.differences(expected: version, actual: other, maps: maps).isEmpty)
        #expect(comparator.differences(expected: version, actual: Self.view(.event, "0e 04 01 01 10 01"), maps: maps).map(\.field).contains("Status"))
    }

    /// The rules follow what a field is (its `FieldID`), not its label: two fields labelled alike, one
    /// an RSSI, differ the same way live; only the other one counts by default, and a field labelled
    /// "RSSI" without the id is compared like any other.
    @Test func comparatorMatchesFieldIDsNotLabels() {
        func view(_ fields: [Field]) -> UnitView {
            var v = Self.view(.event, "0e 04 01 03 0c 00")   // any event: its fields are replaced
            v.layers = [Layer(protocolName: "HCI Event", name: "Test", code: "0xff", fields: fields)]
            v.fields = FlatField.flatten(v.layers)
            return v
        }
        func level(_ id: FieldID, _ label: StaticString, _ dBm: UInt8) -> Field {
            Field(id, label, .integer(UInt64(dBm), .signed(bytes: 1, unit: "dBm")))
        }
        let recorded = view([level(.rssi, "Level", 0xC4), level(.unspecified, "Level", 0xC4), level(.unspecified, "RSSI", 0xC4)])
        let live = view([level(.rssi, "Level", 0xB0), level(.unspecified, "Level", 0xB0), level(.unspecified, "RSSI", 0xB0)])
        let all = Comparator(rules: RuleSet()).all(expected: recorded, actual: live, maps: LinkMaps())
        #expect(all.map(\.field) == ["Level", "Level", "RSSI"])
        #expect(all.map(\.rule) == [ReplayRules.rssi, nil, nil])
        let counted = Comparator(rules: RuleSet()).differences(expected: recorded, actual: live, maps: LinkMaps())
        #expect(counted.map(\.field) == ["Level", "RSSI"])
        #expect(counted.map(\.expected) == ["-60 dBm", "-60 dBm"])
    }

    /// SMP random values fall under `smp-random` by the command's code on the SMP channel (0x0006), not by
    /// the decoded message's name; other SMP fields are compared.
    @Test func smpRandomIsKnownByTheCommandCode() {
        func unit(_ hex: String) -> UnitView {
            UnitView(LinkUnit(content: .l2cap(handle: 1, pdu: Hex.bytes(hex) ?? []), packets: [], frames: [1], timestamp: 0, fromHost: false))
        }
        let comparator = Comparator(rules: RuleSet())
        // L2CAP length 17, CID 0x0006, Pairing Random (0x04) + 16 random bytes
        let recorded = unit("11 00 06 00 04 00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff")
        let live = unit("11 00 06 00 04 ff ee dd cc bb aa 99 88 77 66 55 44 33 22 11 00")
        #expect(recorded.smpCode == .pairingRandom)
        #expect(comparator.all(expected: recorded, actual: live, maps: LinkMaps()).map(\.rule) == [ReplayRules.smpRandom])
        #expect(comparator.differences(expected: recorded, actual: live, maps: LinkMaps()).isEmpty)
        // Pairing Request (0x01): IO capability 0x03 vs 0x04 is a difference under no rule.
        let request = unit("07 00 06 00 01 03 00 01 10 07 07")
        let other = unit("07 00 06 00 01 04 00 01 10 07 07")
        #expect(comparator.differences(expected: request, actual: other, maps: LinkMaps()).map(\.rule) == [nil])
    }

    @Test func advertisingReportsBecomeSightings() {
        // LE Advertising Report: 1 report, ADV_IND, random C0:5E:1A:00:00:02, 3 bytes of data, RSSI -50
        let unit = Self.view(.event, "3e 0f 02 01 00 01 02 00 00 1a 5e c0 03 02 01 06 ce").unit
        let sightings = Sighting.reports(in: unit)
        #expect(sightings == [Sighting(address: BDAddr(string: "C0:5E:1A:00:00:02") ?? BDAddr(0), eventType: 0, extended: false, data: [2, 1, 6])])
        #expect(sightings.first?.summary.hasPrefix("C0:5E:1A:00:00:02 ADV_IND") == true)
    }
}
