import Testing
import BLEBytes
@testable import BLEProtocol

/// Integrity of the HCI decoding tables (Core v5.4 Vol 4 Part E 7.1–7.8): unique codes, names, spec
/// order, Command Complete rows starting with Status, and every row decoding its own minimum payload.
@Suite("HCI tables")
struct HCITableTests {
    /// Each command table with the OGF its rows must carry.
    static let commandGroups: [(name: String, ogf: UInt8, rows: [MessageEntry])] = [
        ("Link Control", 0x01, LinkControlCommands.rows),
        ("Link Policy", 0x02, LinkPolicyCommands.rows),
        ("Controller & Baseband", 0x03, ControllerBasebandCommands.rows),
        ("Informational", 0x04, InformationalCommands.rows),
        ("LE Controller", 0x08, LEControllerCommands.rows),
        ("LE Advertising", 0x08, LEAdvertisingCommands.rows),
        ("LE Isochronous", 0x08, LEIsochronousCommands.rows),
        ("LE Connection", 0x08, LEConnectionCommands.rows),
    ]

    static var allTables: [(name: String, table: MessageTable)] {
        [("commands", HCIDecoder.commands), ("events", HCIDecoder.events), ("LE meta", HCIDecoder.leMeta)]
    }

    @Test func noDuplicateCodes() {
        for (name, table) in Self.allTables {
            #expect(table.duplicateCodes.isEmpty, "duplicate codes in \(name): \(table.duplicateCodes.map { Hex.pad($0, 4) })")
        }
    }

    @Test func everyRowHasAName() {
        for (name, table) in Self.allTables {
            for e in table.entries {
                #expect(!e.name.description.isEmpty, "\(name) row 0x\(Hex.pad(e.code, 4)) has no name")
                #expect(!e.name.description.hasPrefix(" ") && !e.name.description.hasSuffix(" "))
            }
        }
    }

    @Test func commandRowsAreInSpecOrderAndInTheirGroup() {
        for group in Self.commandGroups {
            for e in group.rows {
                #expect(HCIOpcode(rawValue: e.code).ogf == group.ogf, "\(e.name) (0x\(Hex.pad(e.code, 4))) is not in OGF \(group.ogf)")
            }
            let codes = group.rows.map(\.code)
            #expect(codes == codes.sorted(), "\(group.name) rows are not in spec order")
        }
        // Status (OGF 0x05) and Testing (0x06) share a file.
        #expect(StatusCommands.rows.allSatisfy { [0x05, 0x06].contains(HCIOpcode(rawValue: $0.code).ogf) })
        #expect(StatusCommands.rows.map(\.code) == StatusCommands.rows.map(\.code).sorted())
        // The LE files follow one another in opcode order.
        let le = LEControllerCommands.rows + LEAdvertisingCommands.rows + LEIsochronousCommands.rows + LEConnectionCommands.rows
        #expect(le.map(\.code) == le.map(\.code).sorted())
    }

    @Test func eventRowsAreInSpecOrder() {
        #expect(EventTable.rows.map(\.code) == EventTable.rows.map(\.code).sorted())
        #expect(LEMetaTable.rows.map(\.code) == LEMetaTable.rows.map(\.code).sorted())
        // Command Complete, Command Status and LE Meta are decoded by the dispatcher, not by rows.
        for code: UInt16 in [0x0E, 0x0F, 0x3E] { #expect(HCIDecoder.events[code] == nil) }
    }

    @Test func returnParametersStartWithStatus() {
        for e in HCIDecoder.commands.entries {
            guard let returns = e.returns else { continue }
            guard let first = returns.first else {
                Issue.record("\(e.name): empty return parameters")
                continue
            }
            #expect(first.name.description == "Status", "\(e.name): first return parameter is \(first.name)")
            if case .status = first.spec {} else { Issue.record("\(e.name): Status is not a .status spec") }
        }
    }

    /// The commands and events the Core 5.4 LE set and common BR/EDR controllers use, which must
    /// decode by name.
    @Test func coversTheCommonCommandsAndEvents() {
        let commands: [UInt16] = [
            0x0401, 0x0405, 0x0406, 0x0408, 0x0409, 0x040B, 0x040C, 0x0411, 0x0413, 0x0419, 0x041B, 0x041C, 0x041D,
            0x0428, 0x0429, 0x042B, 0x042C, 0x042D, 0x042E, 0x0434, 0x043D,
            0x0803, 0x0804, 0x0809, 0x080B, 0x080C, 0x080D, 0x080E, 0x080F, 0x0811,
            0x0C01, 0x0C03, 0x0C05, 0x0C0D, 0x0C12, 0x0C13, 0x0C14, 0x0C16, 0x0C18, 0x0C1A, 0x0C1C, 0x0C1E, 0x0C24, 0x0C25,
            0x0C26, 0x0C2D, 0x0C33, 0x0C45, 0x0C52, 0x0C55, 0x0C56, 0x0C57, 0x0C58, 0x0C5B, 0x0C63, 0x0C6D, 0x0C7A, 0x0C84,
            0x1001, 0x1002, 0x1003, 0x1004, 0x1005, 0x1009, 0x100A, 0x100B,
            0x1403, 0x1405, 0x1406, 0x1407, 0x1408,
            0x2044, 0x2045, 0x2046, 0x204C, 0x204D, 0x204E, 0x2062, 0x2063, 0x2064, 0x2065, 0x2066, 0x2067, 0x2068,
            0x206A, 0x206B, 0x206C, 0x206E, 0x206F, 0x2074, 0x2075, 0x2076, 0x2077, 0x2078, 0x207A, 0x207C, 0x207D,
            0x207E, 0x207F, 0x2082, 0x2083, 0x2084, 0x2085, 0x2086,
        ]
        for code in commands { #expect(HCIDecoder.commands[code] != nil, "no row for command 0x\(Hex.pad(code, 4))") }
        for code: UInt16 in 0x2001...0x2086 where ![0x2004, 0x2080, 0x2081].contains(code) {
            #expect(HCIDecoder.commands[code] != nil, "no row for LE command 0x\(Hex.pad(code, 4))")
        }
        let events: [UInt16] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x13, 0x14, 0x22, 0x2C, 0x2E, 0x2F, 0x3C, 0x48, 0x59, 0xFF]
        for code in events { #expect(HCIDecoder.events[code] != nil, "no row for event 0x\(Hex.pad(code, 2))") }
        for code: UInt16 in 0x01...0x29 { #expect(HCIDecoder.leMeta[code] != nil, "no row for LE subevent 0x\(Hex.pad(code, 2))") }
    }

    // MARK: Every row decodes its own minimum payload

    /// The fewest bytes a row's parameters need. `SizeRule` counts a `.custom` field as 0 bytes;
    /// every custom reader in the HCI tables reads a leading length, count or mask byte first (or
    /// takes the rest, where a zero byte is padding), so each needs one more byte.
    static func wireMinimum(_ params: [Param]) -> Int {
        SizeRule(params).minimum + params.filter { if case .custom = $0.spec { true } else { false } }.count
    }

    /// Zero bytes of the row's minimum length: counts are zero, so every row must decode them cleanly.
    @Test func everyCommandDecodesItsMinimumParameters() {
        for e in HCIDecoder.commands.entries {
            let n = Self.wireMinimum(e.parameters)
            let layer = HCITest.decode(.command, [UInt8(e.code & 0xFF), UInt8(e.code >> 8), UInt8(n)] + Array(repeating: 0, count: n))
            #expect(layer.error == nil, "\(e.name): \(String(describing: layer.error))")
            #expect(layer.notes.isEmpty, "\(e.name): \(layer.notes)")
            #expect(layer.name == e.name.description)
            if e.size.fixed {
                let longer = HCITest.decode(.command, [UInt8(e.code & 0xFF), UInt8(e.code >> 8), UInt8(n + 1)] + Array(repeating: 0, count: n + 1))
                #expect(longer.error == nil && longer.notes.count == 1, "\(e.name): a trailing byte is a note, not an error")
            }
        }
    }

    @Test func everyCommandCompleteDecodesItsMinimumReturnParameters() {
        for e in HCIDecoder.commands.entries {
            guard let returns = e.returns else { continue }
            let n = Self.wireMinimum(returns)
            let layer = HCITest.decode(.event, [0x0E, UInt8(3 + n), 1, UInt8(e.code & 0xFF), UInt8(e.code >> 8)] + Array(repeating: 0, count: n))
            #expect(layer.error == nil, "\(e.name): \(String(describing: layer.error))")
            #expect(layer.notes.isEmpty, "\(e.name): \(layer.notes)")
            #expect(layer.hciValue("Opcode")?.hciName == e.name.description)
            #expect(layer.hciValue("Status")?.hciName == "Success")
        }
    }

    @Test func everyEventDecodesItsMinimumParameters() {
        for e in HCIDecoder.events.entries {
            let n = Self.wireMinimum(e.parameters)
            let layer = HCITest.decode(.event, [UInt8(e.code), UInt8(n)] + Array(repeating: 0, count: n))
            #expect(layer.error == nil, "\(e.name): \(String(describing: layer.error))")
            #expect(layer.notes.isEmpty, "\(e.name): \(layer.notes)")
            #expect(layer.name == e.name.description)
        }
        for e in HCIDecoder.leMeta.entries {
            let n = Self.wireMinimum(e.parameters)
            let layer = HCITest.decode(.event, [0x3E, UInt8(n + 1), UInt8(e.code)] + Array(repeating: 0, count: n))
            #expect(layer.error == nil, "\(e.name): \(String(describing: layer.error))")
            #expect(layer.notes.isEmpty, "\(e.name): \(layer.notes)")
            #expect(layer.hciValue("Subevent")?.hciName == e.name.description)
        }
    }

    /// A packet one byte short of a fixed row is malformed, and the error names a field inside it.
    @Test func fixedRowsOneByteShortAreMalformed() {
        for e in HCIDecoder.commands.entries where e.size.fixed && e.size.minimum > 0 {
            let n = e.size.minimum - 1
            let bytes = [UInt8(e.code & 0xFF), UInt8(e.code >> 8), UInt8(n)] + Array(repeating: 0, count: n)
            let layer = HCITest.decode(.command, bytes)
            #expect(layer.error != nil, "\(e.name) with \(n) bytes decoded without error")
            if let offset = layer.error?.offset { #expect((0...bytes.count).contains(offset)) }
        }
        for e in HCIDecoder.leMeta.entries where e.size.fixed && e.size.minimum > 0 {
            let n = e.size.minimum - 1
            let layer = HCITest.decode(.event, [0x3E, UInt8(n + 1), UInt8(e.code)] + Array(repeating: 0, count: n))
            #expect(layer.error != nil, "\(e.name) with \(n) bytes decoded without error")
        }
    }
}
