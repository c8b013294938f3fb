import BLEAnalysis
import BLECapture
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
        #expect(c.lifecycle.disconnectReason == .remoteUserTerminated)
        #expect(c.lifecycle.localDisconnectReason != nil)
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

    @Test(.enabled(if: AnalysisFixtures.sharedReal != nil, "../shared/captures/real is absent"))

    func captureWithoutConnectionSetUpStillDecodes() throws {
        let dir = try #require(AnalysisFixtures.sharedReal)
        let (analyzer, _) = try AnalysisFixtures.analyze(dir.appendingPathComponent("android_revcar_acl_only_no_hci.btsnoop").path)
        let c = try #require(analyzer.session.connections.first)
        #expect(c.lifecycle.inferred)
        #expect(analyzer.statistics.malformed == 0)
        #expect((c.gatt(serverIsHost: false)?.services.count ?? 0) >= 5)
    }

    /// `rejected_attempt.btsnoop` (tshark: create #29 to :99 gets Command Status 0x00; create #31 to :02
    /// gets 0x0C; Cancel #33; LE Connection Complete 0x02 #35 for :99; create #36 connects to :02):
    /// the rejected create does not replace the pending attempt, so the cancel still ends it.
    @Test func rejectedCreateLeavesThePendingAttemptToItsCancel() throws {
        let (analyzer, _) = try AnalysisFixtures.analyze(AnalysisFixtures.capture("rejected_attempt.btsnoop"))
        let a = analyzer.session.attempts
        try #require(a.count == 3)
        #expect(a[0].peerAddress?.description == "C0:11:22:33:44:99")
        #expect(a[0].outcome == .cancelled)
        #expect(a[0].cancelFrame == 33 && a[0].endFrame == 35)
        #expect(a[1].peerAddress?.description == "C0:11:22:33:44:02")
        #expect(a[1].outcome == .failed(HCIStatus(rawValue: 0x0C)))
        #expect(a[1].issuedWhilePending == 0)
        #expect(a[2].outcome == .connected(connection: 1))
    }

    /// `mid_connection_start.btsnoop` begins with notifications (tshark: no Connection Complete, no MTU
    /// exchange; five 247-byte ATT PDUs on 0x0010, a 247-byte Write Command, Disconnection Complete 0x13):
    /// the link is inferred from its traffic and its ATT_MTU is only bounded below.
    @Test func midConnectionCaptureInfersTheLinkWithAnUnknownMTU() throws {
        let (analyzer, _) = try AnalysisFixtures.analyze(AnalysisFixtures.capture("mid_connection_start.btsnoop"))
        #expect(analyzer.session.connections.count == 1)
        let c = try #require(analyzer.session.connections.first)
        #expect(c.lifecycle.inferred)
        #expect(c.handle == 0x0001)
        #expect(!c.att.mtuKnown)
        #expect(c.att.knownMTU == nil)
        #expect(c.att.mtu == 247, "the largest ATT PDU seen is the lower bound")
        #expect(c.valueStreams[0x0010]?.notifications == 5)
        #expect(c.lifecycle.disconnectReason == .remoteUserTerminated)
    }

    /// Every capture: analysis runs to the end; frames are all counted.
    @Test func everyCaptureAnalyzes() throws {
        for path in try AnalysisFixtures.allCaptures() {
            let (analyzer, summary) = try AnalysisFixtures.analyze(path)
            let total = analyzer.statistics.perKind.reduce(0, +)
            #expect(total == summary.frames, "\(path)")
        }
    }
    /// HCI_Reset on one adapter of a monitor capture closes that controller's links only.
    @Test func resetClosesOnlyTheLinksOfItsAdapter() {
        let analyzer = Analyzer()
        var number = 0
        func feed(_ adapter: UInt16, _ kind: FrameKind, _ bytes: [UInt8]) {
            number += 1
            bytes.withUnsafeBytes { raw in
                analyzer.consume(Frame(number: number, timestamp: 1_700_000_000_000_000 + Int64(number), direction: kind == .command ? .sent : .received,
                                       kind: kind, adapter: adapter, recordOffset: 0, payloadOffset: 0, payload: raw,
                                       originalLength: bytes.count, rawType: 0))
            }
        }
        // LE Connection Complete: success, handle 0x0040, central, public peer, 30 ms, 0, 4 s.
        let complete: [UInt8] = [0x3E, 0x13, 0x01, 0x00, 0x40, 0x00, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 0x18, 0x00, 0x00, 0x00, 0x90, 0x01, 0x00]
        feed(0, .event, complete)
        feed(1, .event, complete)
        #expect(analyzer.session.live.count == 2)
        feed(1, .command, [0x03, 0x0C, 0x00])   // HCI_Reset on hci1
        let open = analyzer.session.live.keys.map { "\($0.adapter)/\($0.handle)" }
        #expect(open == ["0/64"])
        let closed = analyzer.session.connections.filter { $0.lifecycle.disconnectFrame != nil }.map(\.adapter)
        #expect(closed == [1])
    }
}
