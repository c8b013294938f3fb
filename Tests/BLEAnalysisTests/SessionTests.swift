import BLEAnalysis
import BLEProtocol
import Foundation
import Testing

/// The session model on the Bumble captures: what the script did must be what the model tells.
@Suite struct SessionTests {
    @Test func healthyConnectionStory() throws {
        let (analyzer, _) = try AnalysisFixtures.analyze(AnalysisFixtures.capture("healthy.btsnoop"))
        let s = analyzer.session
        #expect(s.connections.count == 1)
        let c = try #require(s.connections.first)
        #expect(c.role == .central)
        #expect(c.peerAddress?.description == "C0:11:22:33:44:02")
        #expect(c.att.mtu == 247)
        #expect(c.disconnectReason == .remoteUserTerminated)
        #expect(c.localDisconnectReason != nil)
        let hr = try #require(c.valueStreams[0x0010])
        #expect(hr.notifications == 20)
        let ind = try #require(c.valueStreams[0x001F])
        #expect(ind.indications == 3 && ind.confirmations == 3)
        #expect(c.subscriptions[0x0011]?.outcome == .accepted)
        #expect(c.att.requests == c.att.responses)
        #expect(s.attempts.count == 1)
        if case .connected(1) = s.attempts[0].outcome {} else { Issue.record("attempt should have connected") }
        #expect(s.flow.leBuffers?.aclPackets ?? 0 > 0)
        #expect(s.advertisers.all.first?.names == ["bleanalyze-hr"])
    }

    @Test func pairingFailureIsRecorded() throws {
        let (analyzer, _) = try AnalysisFixtures.analyze(AnalysisFixtures.capture("pairing_failed.btsnoop"))
        let c = try #require(analyzer.session.connections.first)
        #expect(c.smp.pairingRequests == 1)
        #expect(c.smp.failures.count == 1)
        #expect(!c.smp.succeeded)
    }

    @Test func captureWithoutConnectionSetUpStillDecodes() throws {
        guard let dir = AnalysisFixtures.sharedReal else { print("notice: corpus absent; skipping"); return }
        let (analyzer, _) = try AnalysisFixtures.analyze(dir.appendingPathComponent("android_revcar_acl_only_no_hci.btsnoop").path)
        let c = try #require(analyzer.session.connections.first)
        #expect(c.inferred)
        #expect(analyzer.statistics.malformed == 0)
        #expect((c.gatt(serverIsHost: false)?.services.count ?? 0) >= 5)
    }

    /// Every capture: analysis runs to the end; frames are all counted.
    @Test func everyCaptureAnalyzes() throws {
        for path in try AnalysisFixtures.allCaptures() {
            let (analyzer, summary) = try AnalysisFixtures.analyze(path)
            let total = analyzer.statistics.perKind.reduce(0, +)
            #expect(total == summary.frames, "\(path)")
        }
    }
}
