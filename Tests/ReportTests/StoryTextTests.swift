import Testing
import TestSupport
@testable import BLEAnalysis
import BLEProtocol
import BLECapture
@testable import BLEReport

/// The story tells what the app did and says only true things; numbers keep their units.
@Suite struct StoryTextTests {
    static func analyze(_ path: String) throws -> (Analyzer, ReadSummary) {
        let analyzer = Analyzer()
        let summary = try CaptureFile(path: path).read { analyzer.consume($0) }
        _ = analyzer.finish()
        return (analyzer, summary)
    }

    static func real(_ name: String) -> String? { Repo.sharedReal?.appendingPathComponent(name).path }

    /// A vendor UUID (36 characters, four hyphens) in an attribute name shortens to its first 8 and
    /// last 4 digits; other words, spacing and SIG names stay. ASCII names take a byte-wise path,
    /// others the Character-wise one: both must agree.
    @Test(arguments: [
        ("02f00000-0000-0000-0000-00000000ff01 @0x0018", "02f00000…ff01 @0x0018"),
        ("Client Characteristic Configuration (0x2902) of 02f00000-0000-0000-0000-00000000ff01 @0x0019",
         "Client Characteristic Configuration (0x2902) of 02f00000…ff01 @0x0019"),
        ("Écran 02f00000-0000-0000-0000-00000000ff01  @0x0018 ", "Écran 02f00000…ff01  @0x0018 "),
        ("x 02f00000-0000-0000-0000-00000000ff01  @0x0018 ", "x 02f00000…ff01  @0x0018 "),
        ("02f00000-0000-0000-0000-00000000ff0-1 @0x0018", "02f00000-0000-0000-0000-00000000ff0-1 @0x0018"),
        ("Heart Rate Measurement (0x2A37) @0x000C", "Heart Rate Measurement (0x2A37) @0x000C"),
    ])
    func shortensVendorUUIDs(_ name: String, _ short: String) {
        #expect(SessionText.shortAttribute(name) == short)
    }

    /// Each fact of the story in words (StoryText): the sentences a person reads, from typed facts.
    /// Encryption Change v2 with key size 0 (Apple's controllers) is "not reported", not 0 octets
    /// (Core v5.4 Vol 4 Part E 7.7.8.1); intervals are exact in 1.25 ms units.
    @Test(arguments: [
        (StoryFact.encryption(on: true, keySize: 0), "encryption on, key size not reported"),
        (.encryption(on: true, keySize: 16), "encryption on, key size 16"),
        (.encryption(on: false, keySize: nil), "encryption off"),
        (.parameters(.init(interval: 6, latency: 0, timeout: 500)), "parameters: interval 7.50 ms, latency 0, timeout 5000 ms"),
        (.disconnected(reason: HCIStatus(rawValue: 0x08), byHost: false), "disconnected: Connection Timeout (0x08), initiated by peer or controller"),
        (.pairingTimedOut(after: SMPCode(rawValue: 0x03)), "pairing timed out: no SMP step for 30 s after the Pairing Confirm (Core v5.4 Vol 3 Part H 3.4)"),
        (.discovery(services: 0, characteristics: 3, descriptors: 1),
         "discovery: 3 characteristics, 1 descriptor (no service discovery on this connection: the client knew the services)"),
        (.subscriptionAccepted(byPeer: false, value: 2, characteristic: "Service Changed (0x2A05) @0x0003"),
         "host subscribed (indications) to Service Changed (0x2A05) @0x0003"),
        (.log("Connected"), "log: Connected"),
        (.classicEncryption(on: true, cipher: .e0, keySize: nil), "encryption on: E0 (no Secure Connections)"),
        (.classicEncryption(on: true, cipher: .aesCCM, keySize: 16), "encryption on: AES-CCM (Secure Connections), key size 16"),
        (.keySize(7, earlier: 16), "encryption key size 7 (56 bits), smaller than the 16 of an earlier connection to this peer"),
        (.keySize(16, earlier: nil), "encryption key size 16"),
        (.linkKey(LinkKeyType(rawValue: 0x04)), "link key: unauthenticated P-192 (no Secure Connections)"),
        (.linkKey(LinkKeyType(rawValue: 0x08)), "link key: authenticated P-256"),
        (.storedLinkKey(found: false), "no stored link key: pairing follows"),
        (.classicPairingMethod(method: .justWorks, hostIO: SMP.IOCapability(rawValue: 1), peerIO: SMP.IOCapability(rawValue: 3), mitm: true, bonding: true),
         "pairing method: Secure Simple Pairing, Just Works (IO DisplayYesNo / NoInputNoOutput), MITM protection asked, impossible with these IO capabilities, bonding"),
        (.classicPairingMethod(method: .numericComparison, hostIO: SMP.IOCapability(rawValue: 1), peerIO: SMP.IOCapability(rawValue: 1), mitm: true, bonding: false),
         "pairing method: Secure Simple Pairing, Numeric Comparison (IO DisplayYesNo / DisplayYesNo), MITM protection, no bonding"),
        (.pairingDeclined, "pairing declined: the host answered the user prompt with a negative reply"),
        (.authenticationFailed(HCIStatus(rawValue: 0x05)), "authentication failed: Authentication Failure (0x05)"),
    ])
    func factsInWords(_ fact: StoryFact, _ sentence: String) {
        #expect(StoryText.sentence(fact) == sentence)
    }

    /// tshark on the horizon capture: 261 Write Requests, 260 of them to 0x0011, one to 0x0015
    /// (`tshark -Y btatt.opcode==0x12 -T fields -e btatt.handle | sort | uniq -c`), all answered.
    @Test(.enabled(if: Repo.sharedReal != nil, "../shared/captures/real is absent"))
    func theStoryCountsTheAppsWrites() throws {
        let (analyzer, _) = try Self.analyze(try #require(Self.real("android_horizon_treadmill_notify.btsnoop")))
        let c = try #require(analyzer.session.connections.first)
        let line = try #require(SessionText.requestSummary(c, sentByHost: true))
        #expect(line.kind == .requests)
        #expect(line.text.hasPrefix("sent 261 writes (260 to "), "\(line.text)")
        #expect(line.text.contains("@0x0011"), "\(line.text)")
        #expect(SessionText.requestSummary(c, sentByHost: false) == nil, "the treadmill never asked the tablet anything")
        // and the default story keeps it
        #expect(ReportText.keyEvents(SessionText.mergedEvents(c)).contains { $0.kind == .requests })
    }

    /// The beewi log's clock jumps between frames 56 and 57 (tshark frame.time_delta 8595485.8 s, the
    /// largest step; the next largest is 0.46 s): the report gives the traffic's span, not 99 days.
    @Test(.enabled(if: Repo.sharedReal != nil, "../shared/captures/real is absent"))
    func aClockJumpIsNotTheSpan() throws {
        let (analyzer, _) = try Self.analyze(try #require(Self.real("android_beewi_scan_malformed_adv.btsnoop")))
        let jump = try #require(analyzer.statistics.clockJump)
        #expect(jump.frame == 57)
        #expect(jump.micros / 1_000_000 == 8_595_485)
    }

    @Test func numbersKeepTheirUnits() {
        let text = ReportText.wrap("Connection 3: handle 67, LE, central, peer NOVA_O38240700268 (14:32:38:31:47:34), lasted 8 min 29 s",
                                   indent: "  ", width: 98, hanging: 4)
        #expect(text == "  Connection 3: handle 67, LE, central, peer NOVA_O38240700268 (14:32:38:31:47:34), lasted\n    8 min 29 s\n")
        let words = ReportText.unbreakableWords("timeout is 30 s and 1 h 23 min, 20 bytes of 3 devices")
        #expect(words == ["timeout", "is", "30 s", "and", "1 h 23 min,", "20 bytes", "of", "3", "devices"])
    }

    @Test func durationsAndRatesReadLikeAPerson() {
        #expect(TimeFormat.duration(400) == "400 µs")
        #expect(TimeFormat.duration(4_500) == "4.5 ms")
        #expect(TimeFormat.duration(250_000) == "250 ms")
        #expect(TimeFormat.duration(3 * 86_400_000_000 + 3_600_000_000) == "3 days 1 h")
        // no rate over 1 ms of 20 values; a rate over a minute of 600 values
        #expect(SessionText.rateText(count: 20, span: 1_000) == " over 1.0 ms")
        #expect(SessionText.rateText(count: 601, span: 60_000_000) == " over 1 min 0 s (about 10/s)")
        #expect(SessionText.rateText(count: 11, span: 3_600_000_000) == " over 1 h 0 min (one every 6 min 0 s on average)")
        #expect(ReportText.plural(1, "byte") == "1 byte")
    }

    /// Renderers read what a security event is from its typed step, not from its sentence. tshark:
    /// `-Y "btsmp.opcode == 0x05"` finds Pairing Failed at frame 34 of pairing_failed, Encryption
    /// Change (`bthci_evt.code == 0x08`) with encryption on at frame 51 of pairing_ok.
    @Test func securityEventsAreMarkedByTheirTypedStep() throws {
        let (failedRun, _) = try Self.analyze(Repo.capture("pairing_failed.btsnoop"))
        let failed = try #require(failedRun.session.connections.first?.timeline.first { $0.frame == 34 })
        #expect(failed.fields.security == .pairingFailed)
        #expect(TimelineSVG.markerStyle(failed).0 == "m-bad")
        #expect(ReportText.keyEvents([failed]).count == 1, "a failure is a key event")
        // The same sentence without the typed step is not a failure to a renderer.
        let told = TimelineEvent(time: failed.time, frame: failed.frame, kind: .security, text: failed.text)
        #expect(TimelineSVG.markerStyle(told).0 == "m-ok")
        #expect(ReportText.keyEvents([told]).isEmpty)

        let (okRun, _) = try Self.analyze(Repo.capture("pairing_ok.btsnoop"))
        let on = try #require(okRun.session.connections.first?.timeline.first { $0.frame == 51 })
        #expect(on.fields.security == .encryptionOn)
        #expect(TimelineSVG.markerStyle(on) == ("m-ok", "encrypted"))
    }

    /// A warning written while its peer was known by address only names the peer as the report does at
    /// the end (a name learnt later: a GAP Device Name read after the finding, a later scan response);
    /// information stays as written.
    @Test func aPeerNamedAfterTheFindingIsNamedByTheRenderer() throws {
        let c = Connection(index: 1, slot: 0, adapter: 0, handle: 0x40)
        c.peerAddress = try #require(BDAddr(string: "C0:FF:EE:00:00:01"))
        func finding(_ severity: Severity) -> Finding {
            Finding(rule: "link.disconnect", severity: severity, connection: c, time: 0, frames: [1],
                    message: "Disconnected from \(peer: c): Connection Timeout (0x08)")
        }
        var warning = finding(.warning), info = finding(.info)
        c.peerName = "Thermo"
        (warning.peer, warning.peerName) = (c.peerLabel, c.peerName)   // as DetectorEngine.finish fills them
        (info.peer, info.peerName) = (c.peerLabel, c.peerName)
        #expect(warning.text == "Disconnected from Thermo (C0:FF:EE:00:00:01): Connection Timeout (0x08)")
        #expect(warning.message.description == "Disconnected from C0:FF:EE:00:00:01: Connection Timeout (0x08)")
        #expect(info.text == "Disconnected from C0:FF:EE:00:00:01: Connection Timeout (0x08)")
        // Written with the name: stays as written, even if the name changed since.
        let named = Finding(rule: "link.disconnect", severity: .warning, connection: c, time: 0, frames: [1], message: "to \(peer: c)")
        c.peerName = "Thermo 2"
        var later = named
        (later.peer, later.peerName) = (c.peerLabel, c.peerName)
        #expect(later.text == "to Thermo (C0:FF:EE:00:00:01)")
    }

    /// On the real corpus, every warning or error that names its peer names it as the report does at the end.
    @Test(.enabled(if: Repo.sharedReal != nil, "../shared/captures/real is absent"))
    func findingsNameThePeerAsTheReportDoes() throws {
        for path in Repo.realCaptures() {
            let analyzer = Analyzer()
            guard (try? CaptureFile(path: path).read { analyzer.consume($0) }) != nil else { continue }
            for f in analyzer.finish() where f.severity != .info {
                guard f.message.parts.contains(where: { if case .peer = $0 { true } else { false } }), let name = f.peerName else { continue }
                #expect(f.text.contains(name), "\(path): \(f.rule): \(f.text)")
            }
        }
    }
}
