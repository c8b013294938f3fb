import Foundation
import Testing
import TestSupport
@testable import BLEAnalysis
import BLEProtocol

/// A bonded peer that comes back on a new resolvable private address is the same device: the LTK the
/// host encrypts the later link with is the one of the link where the peer sent Identity Address
/// Information (Core v5.4 Vol 3 Part H 2.4.1, 3.6.4). captures/gate/rpa_rotation.btsnoop
/// (scripts/make_rpa_rotation.py): RPA 55:92:01:3D:FF:BE pairs and sends C0:11:22:33:44:02 (frame 53);
/// RPA 5D:A1:DA:B6:7B:8D comes back, encrypted with the same LTK (LE Enable Encryption, frames 49 and 130).
@Suite struct BondIdentityTests {
    static let capture = AnalysisFixtures.capture("gate/rpa_rotation.btsnoop")

    @Test("the second link, from a new RPA, carries the identity address of the bond")
    func laterLinkKnowsTheIdentity() throws {
        let (analyzer, _) = try AnalysisFixtures.analyze(Self.capture)
        let links = analyzer.session.connections
        #expect(links.count == 2)
        #expect(links.map { $0.peerAddress?.description } == ["55:92:01:3D:FF:BE", "5D:A1:DA:B6:7B:8D"])
        #expect(links.map { $0.peerIdentityAddress?.description } == ["C0:11:22:33:44:02", "C0:11:22:33:44:02"])
    }

    /// The peripheral's side (rpa_rotation_peripheral.btsnoop): its host gives the key in LE Long Term
    /// Key Request Reply (frames 59 and 147, the same key); the central sent Identity Address
    /// Information C0:11:22:33:44:01 on the first link (frame 67) and none on the second.
    @Test("a host in the peripheral role: the key of LE Long Term Key Request Reply names the bond too")
    func peripheralRoleKeyReply() throws {
        let (analyzer, _) = try AnalysisFixtures.analyze(AnalysisFixtures.capture("gate/rpa_rotation_peripheral.btsnoop"))
        let links = analyzer.session.connections
        #expect(links.count == 2)
        #expect(links.map { $0.peerIdentityAddress?.description } == ["C0:11:22:33:44:01", "C0:11:22:33:44:01"])
    }

    @Test("a redacted copy (keys zeroed) links nothing by its all-zero keys")
    func zeroKeysProveNothing() throws {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("bond-identity-\(getpid()).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: copy) }
        _ = try Redactor.redact(input: Self.capture, output: copy)
        let (analyzer, _) = try AnalysisFixtures.analyze(copy)
        let links = analyzer.session.connections
        #expect(links.count == 2)
        #expect(links.first?.peerIdentityAddress != nil, "Identity Address Information is kept (its address replaced)")
        #expect(links.last?.peerIdentityAddress == nil, "the zeroed LTK of the second link names no bond")
    }
}
