import TestSupport
import BLEAnalysis
import BLECapture
import BLEProtocol
import Testing

/// A server that changes its attribute table between connections (a device rebooting into its
/// bootloader after a control-point write): each table is kept, so `gatt` shows both.
@Suite struct GATTTableChangeTests {
    typealias B = PrecisionRuleTests.Builder

    /// Read By Group Type Request (0x10) for primary services, and its response with one 16-bit service.
    static func discover(_ b: inout B, handle: UInt16, service: UInt16, end: UInt16) {
        b.acl(1000, .sent, handle: handle, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])
        b.acl(1000, .received, handle: handle, [0x11, 6, 0x01, 0x00, UInt8(end & 0xFF), UInt8(end >> 8),
                                                UInt8(service & 0xFF), UInt8(service >> 8)])
    }

    static func disconnect(_ b: inout B, handle: UInt16) {
        b.disconnected(1000, handle: handle, reason: 0x13)
    }

    @Test func aChangedTableIsASecondVersion() throws {
        var b = B()
        // Connection 1: the application's table (Battery Service 0x180F at 0x0001–0x0005).
        b.leConnected(0, handle: 0x40)
        Self.discover(&b, handle: 0x40, service: 0x180F, end: 0x0005)
        Self.disconnect(&b, handle: 0x40)
        // Connection 2: the bootloader's table (Nordic DFU 0xFE59 at 0x0001–0x0009).
        b.leConnected(100_000, handle: 0x41)
        Self.discover(&b, handle: 0x41, service: 0xFE59, end: 0x0009)
        Self.disconnect(&b, handle: 0x41)
        // Connection 3: back to the application: the first table again, no third version.
        b.leConnected(100_000, handle: 0x42)
        Self.discover(&b, handle: 0x42, service: 0x180F, end: 0x0005)
        let (analyzer, _) = try PrecisionRuleTests.analyze(b)
        let model = analyzer.session
        let tables = model.databases.values.filter { !$0.isEmpty }.sorted { $0.version < $1.version }
        #expect(tables.count == 2, "\(tables.map(\.owner))")
        #expect(tables.first?.services[0x0001]?.uuid == BluetoothUUID(uuid16: 0x180F))
        #expect(tables.last?.services[0x0001]?.uuid == BluetoothUUID(uuid16: 0xFE59))
        #expect(tables.last?.owner == "C0:FF:EE:00:00:01 (table 2, from connection 2)")
        let c = model.connections
        #expect(c.count == 3)
        #expect(c[0].peerGATT === tables.first && c[1].peerGATT === tables.last && c[2].peerGATT === tables.first)
    }

    @Test func rediscoveryOfTheSameTableIsOneVersion() throws {
        var b = B()
        b.leConnected(0, handle: 0x40)
        Self.discover(&b, handle: 0x40, service: 0x180F, end: 0x0005)
        Self.disconnect(&b, handle: 0x40)
        b.leConnected(100_000, handle: 0x41)
        Self.discover(&b, handle: 0x41, service: 0x180F, end: 0x0005)
        let (analyzer, _) = try PrecisionRuleTests.analyze(b)
        #expect(analyzer.session.databases.values.filter { !$0.isEmpty }.count == 1)
    }
}
