import BLEAnalysis
import BLEProtocol
import Foundation
import Testing

/// The GATT table rebuilt from each Bumble capture must equal the server the capture script defined
/// (`captures/gatt_server.json`, written by the script from Bumble's own attribute table).
@Suite struct GATTRebuildTests {
    struct Expected {
        var services: [(start: Int, end: Int, uuid: BluetoothUUID)] = []
        var characteristics: [(declaration: Int, value: Int, properties: Int, uuid: BluetoothUUID)] = []
        var descriptors: [(handle: Int, uuid: BluetoothUUID)] = []
    }

    static func expected() throws -> Expected {
        let data = try Data(contentsOf: AnalysisFixtures.repoRoot.appendingPathComponent("captures/gatt_server.json"))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var e = Expected()
        for s in try #require(root["services"] as? [[String: Any]]) {
            let uuid = try #require(BluetoothUUID(string: s["uuid128"] as? String ?? ""))
            e.services.append((try #require(s["start_handle"] as? Int), try #require(s["end_handle"] as? Int), uuid))
            for c in try #require(s["characteristics"] as? [[String: Any]]) {
                let cu = try #require(BluetoothUUID(string: c["uuid128"] as? String ?? ""))
                e.characteristics.append((try #require(c["declaration_handle"] as? Int), try #require(c["value_handle"] as? Int),
                                          try #require(c["properties_value"] as? Int), cu))
                for d in (c["descriptors"] as? [[String: Any]]) ?? [] {
                    // Descriptors are 16-bit SIG UUIDs in the file ("2902").
                    let du = try #require((d["uuid"] as? String).flatMap { UInt16($0, radix: 16) }.map(BluetoothUUID.init(uuid16:)))
                    e.descriptors.append((try #require(d["handle"] as? Int), du))
                }
            }
        }
        return e
    }

    /// Central side: the peer's database; peripheral side: the host's own database as the peer discovered it.
    @Test(arguments: [("healthy.btsnoop", false), ("healthy_peripheral.btsnoop", true)])
    func rebuiltTableEqualsTheScriptsServer(capture: String, local: Bool) throws {
        let expected = try Self.expected()
        let (analyzer, _) = try AnalysisFixtures.analyze(AnalysisFixtures.capture(capture))
        let connection = try #require(analyzer.session.connections.first)
        let db = try #require(connection.gatt(serverIsHost: local))
        #expect(db.services.values.sorted { $0.handle < $1.handle }.map { [Int($0.handle), Int($0.endHandle)] }
                == expected.services.map { [$0.start, $0.end] })
        #expect(db.services.values.sorted { $0.handle < $1.handle }.map(\.uuid) == expected.services.map(\.uuid))
        let chars = db.characteristics.values.sorted { $0.declarationHandle < $1.declarationHandle }
        #expect(chars.map { [Int($0.declarationHandle), Int($0.valueHandle), Int($0.properties)] }
                == expected.characteristics.map { [$0.declaration, $0.value, $0.properties] })
        #expect(chars.map(\.uuid) == expected.characteristics.map(\.uuid))
        let descs = db.descriptors.values.sorted { $0.handle < $1.handle }
        #expect(descs.map { Int($0.handle) } == expected.descriptors.map(\.handle))
        #expect(descs.map(\.uuid) == expected.descriptors.map(\.uuid))
    }
}
