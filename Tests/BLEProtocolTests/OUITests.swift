import Foundation
import TestSupport
import Testing
@testable import BLEProtocol

/// The OUI vendor table against the IEEE registry it is generated from (Debian's ieee-data,
/// read here with its own CSV parsing), and which address fields get a vendor.
@Suite struct OUITests {
    static let registry = URL(fileURLWithPath: "/usr/share/ieee-data/oui.csv")

    /// The MA-L rows of the registry: OUI → names (white space runs made one space, as registered otherwise).
    static func readRegistry() throws -> [UInt32: [String]] {
        let text = try String(contentsOf: registry, encoding: .utf8)
        var rows: [UInt32: [String]] = [:]
        for line in text.split(whereSeparator: \.isNewline).dropFirst() {   // the registry has CRLF lines
            let fields = csvFields(line)
            guard fields.count >= 3, fields[0] == "MA-L", let oui = UInt32(fields[1], radix: 16) else { continue }
            let name = fields[2].split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
            rows[oui, default: []].append(name)
        }
        return rows
    }

    /// RFC 4180 fields of one line (quoted fields may hold commas and doubled quotes).
    static func csvFields(_ line: Substring) -> [String] {
        var fields: [String] = [], current = "", quoted = false
        var i = line.startIndex
        while i < line.endIndex {
            let c = line[i]
            if quoted {
                if c == "\"" {
                    let next = line.index(after: i)
                    if next < line.endIndex, line[next] == "\"" { current.append("\""); i = next } else { quoted = false }
                } else { current.append(c) }
            } else if c == "\"" { quoted = true } else if c == "," { fields.append(current); current = "" } else { current.append(c) }
            i = line.index(after: i)
        }
        fields.append(current)
        return fields
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: registry.path), "ieee-data is not installed"))
    func everyRegisteredOUIHasItsName() throws {
        let rows = try Self.readRegistry()
        #expect(rows.count > 30_000)
        #expect(OUI.count == rows.count)
        var wrong: [String] = []
        for (oui, names) in rows where OUI.vendorBytes(oui: oui).map({ String(decoding: $0, as: UTF8.self) }) != names.sorted().first {
            wrong.append(String(oui, radix: 16))
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(10))")
        // An OUI the registry does not list has no vendor.
        let unlisted = try #require((0 as UInt32 ..< 0x100_0000).first { rows[$0] == nil })
        #expect(OUI.vendorBytes(oui: unlisted) == nil)
    }

    /// The committed table is what `scripts/gen_oui.py` makes from the installed registry.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: registry.path), "ieee-data is not installed"),
          .enabled(if: Tool.available("python3"), "python3 is not installed"))
    func committedTableIsGenerated() {
        let script = Repo.root.appendingPathComponent("scripts/gen_oui.py").path
        #expect(Tool.run("python3", [script, "--check"]) != nil, "run make oui")
    }

    /// btmon 5.66 names 1C:B3:C9 "Apple, Inc." (android_dsp408 capture).
    @Test func knownVendor() {
        #expect(OUI.vendor(BDAddr(0x1CB3_C93C_C3DB)) == "Apple, Inc.")
    }

    @Test func onlyPublicAddressesGetAVendor() {
        let apple = BDAddr(0x1CB3_C93C_C3DB)
        #expect(OUI.vendorBytes(apple, type: .publicDevice, id: .unspecified) != nil)
        #expect(OUI.vendorBytes(apple, type: .publicIdentity, id: .unspecified) != nil)
        #expect(OUI.vendorBytes(apple, type: nil, id: .unspecified) != nil)   // BR/EDR: always public
        #expect(OUI.vendorBytes(apple, type: .randomDevice, id: .unspecified) == nil)
        #expect(OUI.vendorBytes(apple, type: .randomIdentity, id: .unspecified) == nil)
        #expect(OUI.vendorBytes(apple, type: nil, id: .randomAddress) == nil)
        #expect(OUI.vendorBytes(apple, type: nil, id: .localAddress) == nil)
        #expect(OUI.vendorBytes(BDAddr(0), type: .publicDevice, id: .unspecified) == nil)
    }

    /// Which address fields are random is said by the table rows' ids, not their labels: the rows
    /// whose addresses are random or resolvable carry `.randomAddress` / `.localAddress`.
    @Test func randomAddressFieldsAreMarkedInTheRows() throws {
        let rows: [(UInt16, Bool)] = [(0x2035, false), (0x202B, true)]   // LE Set Advertising Set Random Address; LE Read Peer Resolvable Address (returns)
        for (opcode, returns) in rows {
            let row = try #require(HCIDecoder.commands[opcode])
            let params = returns ? (row.returns ?? []) : row.parameters
            #expect(params.contains { $0.id == .randomAddress }, "0x\(String(opcode, radix: 16))")
        }
    }
}
