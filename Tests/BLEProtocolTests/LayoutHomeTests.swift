import BLEBytes
import BLEProtocol
import Foundation
import Testing
import TestSupport

/// Every protocol layout has one home (issue 26): BLEProtocol (tables, typed decoders, header and
/// value-span accessors) over BLEBytes' `ByteReader`. Code elsewhere asks those instead of reading a
/// packet's bytes by index, so a layout is never spelled twice. This scans `Sources/**.swift`
/// outside BLEProtocol and BLEBytes for the two shapes a re-spelled layout takes:
///
/// - **assembly**: an indexed byte shifted into an integer (`UInt16(p[1]) << 8`, `b[i + 2]) << 16`),
///   everywhere outside BLEProtocol/BLEBytes (capture containers included: BLECapture reads them
///   with `ByteReader` or its loaders);
/// - **literal index**: a byte buffer read or sliced at a fixed offset (`p[5]`, `payload[at + 4]`,
///   `frame.payload[0]`, `pdu[4...]`, `point[1 ..< 33]`). A byte buffer is every name the file
///   declares with a byte type (`x: [UInt8]`, `ArraySlice<UInt8>`, `Data`, a raw buffer pointer,
///   `var x = [UInt8](…)`), plus the usual names (`p`, `b`, `bytes`, `payload`, `pdu`, `body`, `raw`,
///   `data`, `buffer`, `packet`) and those reached as members (`.payload`, `.pdu`). BLECapture is
///   exempt from this rule: capture container formats (pcap, btsnoop, PacketLogger, btsnooz record
///   headers and magic numbers) are file formats, not protocol layouts;
/// - **built by hand**: a PDU spelled as a byte literal (`[0x0C] + key`, `send(cid, [0x05, reason])`):
///   build it from its table row (`SMPEncoding`, `HCICommandEncoding`, `ATTEncoding`).
///
/// Lines in `//` comments are not scanned. `allowlist` names the files that may still do it, each
/// with its reason; an entry whose file no longer matches fails too, so the list only shrinks.
@Suite("Layout home")
struct LayoutHomeTests {
    /// File (relative to `Sources/`) → why it may still read bytes by index.
    static let allowlist: [String: String] = [
        "BLEAnalysis/Redaction/Replacements.swift": "writes a replacement address in the style of one written as text in a log record (its separator, original[2]), not a packet layout",
        "BLEReplay/Twin/SecureConnectionsCrypto.swift": "P-256 points in SEC1 uncompressed form (0x04 || X || Y) for libcrypto, not a Bluetooth layout",
        "Fuzz/HCIHarness.swift": "the fuzz input's first byte selects the packet type (the harness's own input format), the rest is the packet",
    ]

    enum Rule: String, Sendable { case assembly, literalIndex, built }

    struct Hit: Sendable, CustomStringConvertible {
        var file: String
        var line: Int
        var rule: Rule
        var text: String
        var description: String { "\(file):\(line): \(rule.rawValue): \(text)" }
    }

    // An indexed byte, then (after an optional closing parenthesis) a left shift by a byte multiple.
    static let assembly = try! NSRegularExpression(pattern: #"\[[^\[\]]+\]\s*\)?\s*<<\s*(8|16|24|32|40|48|56)\b"#)
    static let usualBuffers = ["p", "b", "bytes", "payload", "pdu", "body", "raw", "data", "buffer", "packet"]
    // A name declared with a byte type, or given a new byte array.
    static let bufferDeclaration = try! NSRegularExpression(pattern:
        #"\b([A-Za-z_]\w*)\s*:\s*(?:inout\s+)?(?:\[UInt8\]|ArraySlice<UInt8>|Unsafe(?:Mutable)?RawBufferPointer|Data)(?![\w<])|\b(?:let|var)\s+([A-Za-z_]\w*)\s*=\s*\[UInt8\]\("#)
    // A PDU spelled as bytes: a byte literal joined to more bytes, or handed to a send.
    static let built = try! NSRegularExpression(pattern:
        #"\[0x[0-9A-Fa-f]{1,2}(?:\s*,\s*0x[0-9A-Fa-f]{1,2})*\]\s*\+|send\w*\([^()]*\[0x[0-9A-Fa-f]{1,2}\s*[,\]]"#)

    /// The byte buffers of `source`: the names it declares with a byte type, and the usual ones.
    static func buffers(_ source: String) -> [String] {
        var names = Set(usualBuffers)
        for m in bufferDeclaration.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
            for group in 1 ... 2 {
                if let r = Range(m.range(at: group), in: source) { names.insert(String(source[r])) }
            }
        }
        return names.sorted()
    }

    // A byte buffer subscripted by a literal, or by a name plus or minus a literal; or sliced from
    // a literal (`[4...]`, `[1 ..< 33]`; `[0 ..< n]`, a read's length, is not a layout).
    static func literalIndex(_ buffers: [String]) -> NSRegularExpression {
        let names = buffers.joined(separator: "|")
        return try! NSRegularExpression(pattern:
            #"(?:(?<![\w.])(?:"# + names + #")|\.(?:"# + names + #"))\[\s*(?:[A-Za-z_][\w.]*\s*[+-]\s*)?(?:\d+|0x[0-9A-Fa-f]+)\s*(?:\]|\.\.\.|\.\.<\s*(?:\d+|0x[0-9A-Fa-f]+)\s*\])"#)
    }

    /// The hits in `source` (the text of `file`, a path under `Sources/`).
    static func scan(_ source: String, file: String) -> [Hit] {
        let capture = file.hasPrefix("BLECapture/")
        let literalIndex = Self.literalIndex(buffers(source))
        var hits: [Hit] = []
        for (n, line) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let code = String(line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            let range = NSRange(code.startIndex..., in: code)
            if assembly.firstMatch(in: code, range: range) != nil {
                hits.append(Hit(file: file, line: n + 1, rule: .assembly, text: line.trimmingCharacters(in: .whitespaces)))
            } else if built.firstMatch(in: code, range: range) != nil {
                hits.append(Hit(file: file, line: n + 1, rule: .built, text: line.trimmingCharacters(in: .whitespaces)))
            } else if !capture, literalIndex.firstMatch(in: code, range: range) != nil {
                hits.append(Hit(file: file, line: n + 1, rule: .literalIndex, text: line.trimmingCharacters(in: .whitespaces)))
            }
        }
        return hits
    }

    @Test("the scanner finds the shapes a re-spelled layout takes, and leaves reader calls alone")
    func scannerCatches() {
        let caught = [
            "let handle = (UInt16(p[0]) | UInt16(p[1]) << 8) & 0x0FFF",
            "let v = UInt32(b[at]) | UInt32(b[at + 1]) << 8",
            "switch p[0] {",
            "case HCIEventCode.commandComplete: return p.count >= 6 && p[5] != 0",
            "let opcode = ATTOpcode(bytes[4])",
            "guard frame.payload[2] == 0x3E else { return }",
            "let type = r.bytes[r.position + 4]",
            "let n = Int(payload[at + 2])",
            "let payload = Array(pdu[4...])",                // a header skipped by its length
            "x = Array(point[1 ..< 33])\nlet point: [UInt8] = []", // any buffer the file declares
            "p.pdu[5] = addressType.rawValue & 1",
            "send(smp, [0x0C] + pkbx + own.y.reversed())",   // built by hand
            "send(L2CAP.ChannelID.smp.rawValue, [0x05, reason])",
        ]
        for line in caught { #expect(!Self.scan(line, file: "BLEAnalysis/X.swift").isEmpty, "\(line)") }
        let fine = [
            "guard let opcode = HCIPacketHeader.commandOpcode(p.reader) else { return }",
            "let v = r.getU16le(at: offset)",
            "let first = strings[0]",                       // not a byte buffer
            "let next = samples[i + 1]",
            "out.setU16le(live, at: o)",
            "let x = p[i]",                                 // a walk, not a fixed offset
            "hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0 ..< n]))",   // what a read returned
            "let names = [\"a\"] + more",                 // not bytes
            "send(channel, try SMPEncoding.command(.pairingConfirm, values))",
            "// UInt16(p[0]) | UInt16(p[1]) << 8 in a comment",
            "let v = value << 8 | UInt64(hi << 4 | lo)",    // a shift of a value, not of an indexed byte
        ]
        for line in fine { #expect(Self.scan(line, file: "BLEAnalysis/X.swift").isEmpty, "\(line)") }
        // Capture containers may read record headers by offset, but not assemble integers by hand.
        #expect(Self.scan("let type = bytes[offset + 12]", file: "BLECapture/PacketLoggerReader.swift").isEmpty)
        #expect(Self.scan("let m = UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16", file: "BLECapture/CaptureFormat.swift").count == 1)
    }

    /// Calls `body` with each Swift file under Sources/ (its path from there, its text) outside the
    /// folders given; returns how many it read.
    static func eachSource(outside skipped: [String], _ body: (String, String) throws -> Void) throws -> Int {
        let sources = Repo.root.appendingPathComponent("Sources")
        let walker = try #require(FileManager.default.enumerator(atPath: sources.path), "cannot list \(sources.path)")
        var scanned = 0
        for case let file as String in walker where file.hasSuffix(".swift") && !skipped.contains(where: file.hasPrefix) {
            try body(file, try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8))
            scanned += 1
        }
        return scanned
    }

    @Test("no protocol layout is read by byte index outside BLEProtocol and BLEBytes (allowlist aside)")
    func layoutsLiveInBLEProtocol() throws {
        var hits: [Hit] = []
        let scanned = try Self.eachSource(outside: ["BLEProtocol/", "BLEBytes/"]) { file, text in hits += Self.scan(text, file: file) }
        #expect(scanned > 100, "only \(scanned) source files found")
        let unexpected = hits.filter { Self.allowlist[$0.file] == nil }
        #expect(unexpected.isEmpty, "read through BLEProtocol (a typed decode, a table row, HCIPacketHeader, ATT.valueSpans…) or ByteReader's get/peek verbs:\n\(unexpected.map(\.description).joined(separator: "\n"))")
        let stale = Self.allowlist.keys.filter { file in !hits.contains { $0.file == file } }.sorted()
        #expect(stale.isEmpty, "allowlisted but clean now, remove from the allowlist: \(stale)")
    }

    @Test("outside BLEProtocol a parameter key is a named constant (HCIKey, SMP.Key), never a string")
    func keysAreConstants() throws {
        // A key spelled as a string compiles whatever it says and fails only when the row lacks it;
        // a constant is spelled once, beside the rows that carry it.
        let literal = try NSRegularExpression(pattern: #"ParamKey\(\s*""#)
        var hits: [String] = []
        let scanned = try Self.eachSource(outside: ["BLEProtocol/"]) { file, text in
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let s = String(line)
                if literal.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil { hits.append("\(file):\(n + 1): \(s)") }
            }
        }
        #expect(scanned > 100, "only \(scanned) source files found")
        #expect(hits.isEmpty, "use an HCIKey / SMP.Key constant:\n\(hits.joined(separator: "\n"))")
        // The scanner sees the shape it forbids.
        let probe = #"[ParamKey("Connection_Handle"): .int(1)]"#
        #expect(literal.firstMatch(in: probe, range: NSRange(probe.startIndex..., in: probe)) != nil)
    }
}

/// The accessors code outside BLEProtocol reads headers and values through, on hex vectors.
@Suite("Header and value-span accessors")
struct HeaderAccessorTests {
    static func reader<T>(_ hex: [UInt8], _ body: (ByteReader) -> T) -> T { hex.withReader { body($0) } }

    @Test func hciHeaders() {
        // Command Complete for LE Set Scan Enable (0x200C), status 0x0C: 0e 04 01 0c 20 0c.
        let cc: [UInt8] = [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x0C]
        #expect(Self.reader(cc) { HCIPacketHeader.answeredOpcode($0) } == 0x200C)
        #expect(Self.reader(cc) { HCIPacketHeader.answeredStatus($0) } == 0x0C)
        #expect(Self.reader(Array(cc.prefix(5))) { HCIPacketHeader.answeredStatus($0) } == nil)
        // Command Status: 0f 04 status=00 num=01 opcode 0d 20.
        let cs: [UInt8] = [0x0F, 0x04, 0x00, 0x01, 0x0D, 0x20]
        #expect(Self.reader(cs) { HCIPacketHeader.answeredOpcode($0) } == 0x200D)
        #expect(Self.reader(cs) { HCIPacketHeader.answeredStatus($0) } == 0x00)
        // LE Meta, subevent 0x0A; not LE Meta: no subevent.
        #expect(Self.reader([0x3E, 0x1F, 0x0A]) { HCIPacketHeader.leSubevent($0) } == 0x0A)
        #expect(Self.reader([0x05, 0x04, 0x00]) { HCIPacketHeader.leSubevent($0) } == nil)
        // ACL: handle 0x042, PB 0b10, length 7.
        let acl = Self.reader([0x42, 0x20, 0x07, 0x00]) { HCIPacketHeader.acl($0) }
        #expect(acl?.handle == 0x042 && acl?.packetBoundary == 0b10 && acl?.length == 7)
        #expect(Self.reader([0x42, 0x20, 0x07]) { HCIPacketHeader.acl($0) } == nil)
        // Lengths from the headers (Vol 4 Part E 5.4): ISO keeps 14 bits.
        #expect(Self.reader([0x03, 0x0C, 0x05]) { HCIPacketHeader.packetLength(.command, $0) } == 8)
        #expect(Self.reader([0x3E, 0x13]) { HCIPacketHeader.packetLength(.event, $0) } == 21)
        #expect(Self.reader([0x40, 0x00, 0x1B, 0x00]) { HCIPacketHeader.packetLength(.acl, $0) } == 31)
        #expect(Self.reader([0x40, 0x00, 0x10, 0xC0]) { HCIPacketHeader.packetLength(.iso, $0) } == 20)
        #expect(Self.reader([0x40, 0x00, 0x10]) { HCIPacketHeader.packetLength(.iso, $0) } == nil)
    }

    @Test func attOpcodeOnlyOnTheATTChannel() {
        // L2CAP length 3, CID 0x0004, Read Request (0x0A) of handle 0x0003; the same on CID 0x0005.
        #expect(Self.reader([0x03, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00]) { L2CAP.attOpcode($0) } == .readRequest)
        #expect(Self.reader([0x03, 0x00, 0x05, 0x00, 0x0A, 0x03, 0x00]) { L2CAP.attOpcode($0) } == nil)
        #expect(Self.reader([0x03, 0x00, 0x04, 0x00]) { L2CAP.attOpcode($0) } == nil)
        #expect(Self.reader([0x03, 0x00, 0x04, 0x00, 0x1B, 0x25, 0x00, 0x01]) { ATT.peekHandle($0, opcodeAt: L2CAP.basicHeaderLength) } == 0x0025)
    }

    @Test func valueSpans() {
        // Notification of handle 0x0025: value 01 02 03 from offset 3.
        #expect(Self.reader([0x1B, 0x25, 0x00, 0x01, 0x02, 0x03]) { ATT.valueSpans($0) } == [ATT.ValueSpan(start: 3, count: 3, handle: 0x25)])
        // Read By Type Response, length 4: (0x0010, aa bb), (0x0011, cc dd), then a partial pair left out.
        #expect(Self.reader([0x09, 0x04, 0x10, 0x00, 0xAA, 0xBB, 0x11, 0x00, 0xCC, 0xDD, 0x12, 0x00]) { ATT.valueSpans($0) }
                == [ATT.ValueSpan(start: 4, count: 2, handle: 0x10), ATT.ValueSpan(start: 8, count: 2, handle: 0x11)])
        // Read Multiple Variable Response: (2, aa bb), (5, cc — cut at the end).
        #expect(Self.reader([0x21, 0x02, 0x00, 0xAA, 0xBB, 0x05, 0x00, 0xCC]) { ATT.valueSpans($0) }
                == [ATT.ValueSpan(start: 3, count: 2, handle: nil), ATT.ValueSpan(start: 7, count: 1, handle: nil)])
        // Signed Write: the value without its 12-byte signature; too short for one: nothing.
        #expect(Self.reader([0xD2, 0x01, 0x00, 0x55] + [UInt8](repeating: 0, count: 12)) { ATT.valueSpans($0) } == [ATT.ValueSpan(start: 3, count: 1, handle: 1)])
        #expect(Self.reader([0xD2, 0x01, 0x00, 0x55]) { ATT.valueSpans($0) }.isEmpty)
        #expect(ATT.valueStart(.prepareWriteRequest) == 5 && ATT.valueStart(.readResponse) == 1 && ATT.valueStart(.readRequest) == nil)
    }
}
