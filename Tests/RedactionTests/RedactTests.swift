import TestSupport
import BLEAnalysis
import BLEBytes
import BLECapture
import BLEProtocol
import Foundation
import Testing

/// `bleanalyze redact`: every capture format round-trips with the same records and the same
/// findings, and what must go is gone.
@Suite struct RedactTests {
    /// Every readable capture: HCI (btsnoop, pcap, pcapng, PacketLogger) and LE air captures.
    static let inputs = Fixtures.allCaptures.filter { (try? CaptureFile(path: $0)) != nil }

    @Test(arguments: inputs)
    func sameRecordsSameFindings(path: String) throws {
        let name = URL(fileURLWithPath: path).lastPathComponent
        let out = Fixtures.temporary("redacted-" + name)
        let summary = try Redactor.redact(input: path, output: out)
        let before = try AnalysisFacts(path)
        let after = try AnalysisFacts(out)

        // The container: same format, datalink, byte order; gzip is written uncompressed.
        #expect(after.info.format == before.info.format, "\(name)")
        #expect(after.info.datalink == before.info.datalink, "\(name)")
        #expect(after.info.bigEndian == before.info.bigEndian, "\(name)")
        #expect(!after.info.compressed)
        #expect(summary.inputWasCompressed == before.info.compressed)
        if !before.info.compressed {
            #expect(after.info.fileSize == before.info.fileSize, "\(name): redaction never changes a length")
            let a = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))), b = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
            if before.info.format == .pcap { #expect(a.prefix(24).elementsEqual(b.prefix(24)), "\(name): pcap header (magic = µs/ns, link type) kept") }
            if before.info.format == .btsnoop { #expect(a.prefix(16).elementsEqual(b.prefix(16)), "\(name): btsnoop header kept") }
        }

        // Every record: same count, timestamps, kinds, directions, lengths.
        let original = try CaptureFile(path: path).records(), redacted = try CaptureFile(path: out).records()
        #expect(redacted.records.count == original.records.count, "\(name)")
        #expect(after.summary.frames == before.summary.frames, "\(name)")
        #expect(after.summary.truncated == before.summary.truncated, "\(name)")
        #expect(after.summary.issues.map(\.offset) == before.summary.issues.map(\.offset), "\(name)")
        for (o, r) in zip(original.records, redacted.records) {
            #expect(o.timestamp == r.timestamp && o.kind == r.kind && o.direction == r.direction && o.adapter == r.adapter
                        && o.payload.count == r.payload.count && o.originalLength == r.originalLength, "\(name)")
        }

        // Same findings (rule, connection, evidence frames), ATT counts, malformed frames.
        let lost = before.findings.subtracting(after.findings), gained = after.findings.subtracting(before.findings)
        #expect(lost.isEmpty && gained.isEmpty, "\(name): lost \(lost), gained \(gained)")
        #expect(after.attOpcodes == before.attOpcodes, "\(name)")
        #expect(after.malformed == before.malformed, "\(name)")

        // Addresses: none of the originals is left; the fakes keep the type bits; same → same.
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
        var fakes: [BDAddr: BDAddr] = [:]
        let pairs = zip(before.peerAddresses, after.peerAddresses).compactMap { a, b in a.flatMap { x in b.map { (x, $0) } } }
            + zip(before.advertiserAddresses, after.advertiserAddresses).map { ($0, $1) }
        for (real, fake) in pairs where real.value != 0 && real.value != 0xFFFF_FFFF_FFFF {
            let left = bytes.contains(bytes: real.wireBytes)
            #expect(!left, "\(name): \(real) is still in the copy")
            #expect(real.value >> 46 == fake.value >> 46, "\(name): \(real) → \(fake) changed the address type bits")
            if let known = fakes[real] { #expect(known == fake, "\(name): \(real) got two fakes") }
            fakes[real] = fake
        }
        #expect(Set(fakes.values).count == fakes.count, "\(name): two addresses got the same fake")
        for advertised in before.advertiserNames where advertised.utf8.count >= 4 {
            let left = bytes.contains(bytes: Array(advertised.utf8))
            #expect(!left, "\(name): name \(advertised) is still in the copy")
        }
    }

    /// After redaction every key field the tables decode (HCI and SMP) is zero.
    @Test(arguments: ["pairing_ok.btsnoop", "repeated_pairing.btsnoop", "encryption_failed.btsnoop", "pairing_failed.btsnoop"])
    func keysAreZeroed(name: String) throws {
        let input = Fixtures.repoRoot.appendingPathComponent("captures/\(name)").path
        let out = Fixtures.temporary("keys-" + name)
        try Redactor.redact(input: input, output: out)
        let before = Self.secrets(input), after = Self.secrets(out)
        #expect(before.count == after.count)
        for s in after { #expect(s.allSatisfy { $0 == 0 }, "\(name): key not zeroed: \(Hex.string(s))") }
        if name == "pairing_ok.btsnoop" { #expect(before.contains { $0.contains { $0 != 0 } }, "\(name): the original has key material") }
    }

    /// Every `.secret` value decoded from a capture (HCI layers and L2CAP PDUs).
    static func secrets(_ path: String) -> [[UInt8]] {
        guard let file = try? CaptureFile(path: path) else { return [] }
        let analyzer = Analyzer()
        var found: [[UInt8]] = []
        func walk(_ fields: [Field]) {
            for f in fields {
                switch f.value {
                case let .secret(b): found.append(b)
                case let .group(g): walk(g)
                case let .list(items): items.forEach(walk)
                default: break
                }
            }
        }
        _ = file.read { frame in
            analyzer.consume(frame) { pdu in
                var r = pdu.bytes
                for layer in L2CAPDisplay.decode(pdu: &r) { walk(layer.fields) }
            }
            for layer in FrameLayers.decode(frame) { walk(layer.fields) }
        }
        return found
    }

    @Test func namesAreReplacedUnlessKept() throws {
        let input = Fixtures.repoRoot.appendingPathComponent("captures/healthy.btsnoop").path
        let name = Array("bleanalyze-hr".utf8)
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: input)))
        #expect(original.contains(bytes: name))
        let out = Fixtures.temporary("names.btsnoop"), kept = Fixtures.temporary("names-kept.btsnoop")
        let summary = try Redactor.redact(input: input, output: out)
        #expect(summary.nameFields > 0)
        let left = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out))).contains(bytes: name)
        #expect(!left)
        try Redactor.redact(input: input, output: kept, options: RedactionOptions(keepNames: true))
        let keptBytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: kept)))
        let nameKept = keptBytes.contains(bytes: name), addressLeft = keptBytes.contains(bytes: [0x02, 0x44, 0x33, 0x22, 0x11, 0xC0])
        #expect(nameKept)
        #expect(!addressLeft, "addresses are replaced even with --keep-names")
        // The GATT Device Name read (ATT Read Response of the 0x2A00 value) is replaced too: the
        // only copies of the name in the file were advertising data and that response.
        let advertisers = try AnalysisFacts(out).advertiserNames
        #expect(advertisers.allSatisfy { $0.hasPrefix("Device-") || $0.hasPrefix("Dev") }, "\(advertisers)")
    }

    @Test func logTextIsReplacedAndProcessNamesKept() throws {
        guard let pklg = Fixtures.generatedCaptures.first(where: { $0.hasSuffix("-le.pklg") }),
              let monitor = Fixtures.generatedCaptures.first(where: { $0.hasSuffix("monitor.btsnoop") }) else {
            Issue.record("generated captures missing"); return
        }
        for input in [pklg, monitor] {
            let out = Fixtures.temporary("log-" + URL(fileURLWithPath: input).lastPathComponent)
            let summary = try Redactor.redact(input: input, output: out)
            #expect(summary.logRecords > 0)
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
            let message = bytes.contains(bytes: Array("Connected to".utf8)) || bytes.contains(bytes: Array("device_connect".utf8))
            let process = bytes.contains(bytes: Array("bluetoothd".utf8)), marker = bytes.contains(bytes: Array("[redacted]".utf8))
            #expect(!message, "log message replaced")
            #expect(process, "the process name stays")
            #expect(marker)
        }
    }

    /// A key split over two ACL fragments: the piece in the earlier frame is zeroed too (first pass).
    @Test func keySplitOverFragmentsIsZeroed() throws {
        let ltk: [UInt8] = (1...16).map { UInt8($0) &* 17 }
        // SMP Encryption Information: L2CAP length 17, CID 0x0006, code 0x06, LTK.
        let pdu = CaptureBuilder.l2cap(0x0006, [0x06] + ltk)
        // LE Connection Complete, handle 0x0040, peer C0:11:22:33:44:55 (static random), timeout 720 ms.
        var b = CaptureBuilder(start: 1_700_000_000_000_000, peer: [0x55, 0x44, 0x33, 0x22, 0x11, 0xC0])
        b.leConnected(0, handle: 0x40, timeout: 0x48)
        b.fragment(1000, .received, handle: 0x40, pb: 0x2000, Array(pdu[0..<12]))
        b.continuation(1000, .received, handle: 0x40, Array(pdu[12...]))
        let input = try Fixtures.write("split-key.btsnoop", b.bytes)
        let out = Fixtures.temporary("split-key-redacted.btsnoop")
        let summary = try Redactor.redact(input: input, output: out)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
        #expect(summary.keyFields == 2, "one piece per fragment")
        let firstPiece = bytes.contains(bytes: Array(ltk[0..<7])), secondPiece = bytes.contains(bytes: Array(ltk[7...]))
        let address = bytes.contains(bytes: [0x55, 0x44, 0x33, 0x22, 0x11, 0xC0])
        #expect(!firstPiece && !secondPiece, "both pieces of the LTK are zeroed")
        #expect(!address)
        #expect(bytes.count == b.bytes.count)
    }

    /// A file cut inside a record: the copy is cut at the same place, reports the same issue, and
    /// the bytes of the unreadable record are zeros.
    @Test func truncatedFileKeepsItsCut() throws {
        let input = Fixtures.repoRoot.appendingPathComponent("captures/healthy.btsnoop").path
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: input)))
        for cut in [bytes.count - 3, bytes.count / 2, 16 + 10] {
            let path = try Fixtures.write("cut-\(cut).btsnoop", Array(bytes.prefix(cut)))
            let out = Fixtures.temporary("cut-\(cut)-redacted.btsnoop")
            let summary = try Redactor.redact(input: path, output: out)
            let before = try AnalysisFacts(path), after = try AnalysisFacts(out)
            #expect(after.summary.frames == before.summary.frames)
            #expect(after.summary.truncated && before.summary.truncated)
            #expect(after.summary.issues.map(\.offset) == before.summary.issues.map(\.offset))
            #expect(after.summary.issues.map(\.kind) == before.summary.issues.map(\.kind))
            #expect(summary.zeroedTailBytes > 0 || cut <= (before.summary.issues.first?.offset ?? 0) + 24, "cut at \(cut)")
        }
    }

    @Test func refusesToOverwriteItsInput() throws {
        let input = Fixtures.repoRoot.appendingPathComponent("captures/healthy.btsnoop").path
        let copy = try Fixtures.write("self.btsnoop", try [UInt8](Data(contentsOf: URL(fileURLWithPath: input))))
        #expect(throws: CaptureError.self) { try Redactor.redact(input: copy, output: copy) }
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: copy))) == [UInt8](Data(contentsOf: URL(fileURLWithPath: input))))
        let out = Fixtures.temporary("x")
        #expect(throws: CaptureError.self) { try Redactor.redact(input: Fixtures.temporary("missing"), output: out) }
        #expect(!FileManager.default.fileExists(atPath: out), "nothing is left behind on error")
    }

    /// The fake addresses keep the LE random subtype bits and are never all zeros or ones in the random part.
    @Test func fakeAddressesKeepTheirType() {
        let map = AddressMapProbe()
        for (real, top) in [(0xC0_1122_3344_55 as UInt64, 0b11 as UInt64), (0x40_1122_3344_55, 0b01), (0x00_1122_3344_55, 0b00), (0x80_1122_3344_55, 0b10)] {
            let fake = map.fake(real)
            #expect(fake >> 46 == top)
            #expect(fake != real)
            let random = fake & 0x3FFF_FFFF_FFFF
            #expect(random != 0 && random != 0x3FFF_FFFF_FFFF)
            #expect(map.fake(real) == fake, "same address, same fake")
        }
        #expect(map.fake(0) == 0 && map.fake(0xFFFF_FFFF_FFFF) == 0xFFFF_FFFF_FFFF)
    }
}

/// Runs `AddressMap` through a one-address redaction (the type is internal to BLEAnalysis).
final class AddressMapProbe {
    private var cache: [UInt64: UInt64] = [:]
    private var records: [RecordToWrite] = []

    func fake(_ value: UInt64) -> UInt64 {
        if let f = cache[value] { return f }
        // LE Set Random Address (0x2005) carries one address: redact a file holding it.
        let a = (0..<6).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * $0)) }
        records.append(RecordToWrite(timestamp: 1_700_000_000_000_000 + Int64(records.count), direction: .sent, kind: .command,
                                     payload: [0x05, 0x20, 0x06] + a))
        var w = BTSnoopWriter()
        for r in records { w.append(r) }
        guard let input = try? Fixtures.write("probe.btsnoop", w.bytes) else { return value }
        let out = Fixtures.temporary("probe-redacted.btsnoop")
        guard (try? Redactor.redact(input: input, output: out)) != nil, let file = try? CaptureFile(path: out) else { return value }
        let last = file.records().records.last?.payload ?? []
        guard last.count == 9 else { return value }
        var v: UInt64 = 0
        for i in 0..<6 { v |= UInt64(last[3 + i]) << UInt64(8 * i) }
        cache[value] = v
        return v
    }
}
