import BLECapture
import Foundation
import Testing

/// Properties of every reader on every capture of the project (and PacketLogger files made from
/// them): every prefix reads without a trap and reports the cut where the last complete record
/// ends; random bit flips in record headers and payloads never trap and never yield a frame outside
/// the file; a length field of 0xFFFFFFFF is reported, not believed.
///
/// (BTSnoopReaderTests covers a 4-record file byte by byte and RealCorpusTests random cuts of two
/// real captures; these run over every capture and every format.)
@Suite struct PropertyReaderTests {
    /// The captures of `captures/`, plus PacketLogger files in both byte orders made from healthy.btsnoop.
    static let files: [(name: String, bytes: [UInt8])] = {
        let dir = CaptureTestPaths.repoRoot.appendingPathComponent("captures")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [])
            .filter { n in [".btsnoop", ".pcap", ".pcapng", ".gz", ".pklg"].contains { n.hasSuffix($0) } }.sorted()
        var out = names.compactMap { n in (try? Data(contentsOf: dir.appendingPathComponent(n))).map { (n, [UInt8]($0)) } }
        if let file = try? CaptureFile(path: CaptureTestPaths.capture("healthy.btsnoop")) {
            let records = file.records().records
            for bigEndian in [false, true] {
                var w = PacketLoggerWriter(bigEndian: bigEndian)
                for r in records { w.append(r) }
                out.append(("healthy-\(bigEndian ? "be" : "le").pklg", w.bytes))
            }
        }
        return out
    }()

    static var names: [String] { files.map(\.name) }

    struct Reading {
        var frames: [(recordOffset: Int, end: Int)] = []
        var summary = ReadSummary()
        var info: CaptureInfo?
        var opened = true
    }

    /// Reads `bytes` as a file and checks what holds for any input: frames numbered 1, 2, 3…; for
    /// memory-mapped formats, every frame inside the file and in file order. The per-frame checks are
    /// collected and recorded as one expectation per read (`everyPrefix` reads ~130 000 prefixes:
    /// an `#expect` per frame cost most of the suite's time).
    static func read(_ bytes: [UInt8], name: String) throws -> Reading {
        // A file of its own: the tests of one capture run in parallel.
        let path = try CaptureTestPaths.temporaryFile("property-\(UInt64.random(in: 0 ... .max))-" + name, bytes)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var reading = Reading()
        guard let file = try? CaptureFile(path: path) else { reading.opened = false; return reading }
        reading.info = file.info
        let mapped = (file.info.format == .btsnoop || file.info.format == .packetlogger) && !file.info.compressed
        var expected = 1
        var violations: [String] = []
        reading.summary = file.read { f in
            if f.number != expected { violations.append("\(name): frame numbered \(f.number), expected \(expected)") }
            expected = f.number + 1
            if mapped {
                if !(f.payloadOffset >= 0 && f.payloadOffset + f.payload.count <= bytes.count) { violations.append("\(name): frame \(f.number) outside the file") }
                if !(f.recordOffset >= (reading.frames.last?.end ?? 0)) { violations.append("\(name): frame \(f.number) out of order") }
            }
            reading.frames.append((f.recordOffset, f.payloadOffset + f.payload.count))
        }
        if reading.summary.frames != reading.frames.count {
            violations.append("\(name): summary counts \(reading.summary.frames) frames, \(reading.frames.count) delivered")
        }
        #expect(violations.isEmpty, "\(violations.count) violations, first: \(violations.prefix(3))")
        return reading
    }

    /// Every prefix of every capture: complete records are read, a cut inside a record is reported
    /// at that record's offset with its frame number, a cut on a boundary is a clean end.
    @Test(arguments: names)
    func everyPrefix(name: String) throws {
        let bytes = try #require(Self.files.first { $0.name == name }?.bytes)
        let full = try Self.read(bytes, name: name)
        let info = try #require(full.info)
        #expect(!full.summary.truncated && full.summary.issues.isEmpty, "\(name) itself reads cleanly")
        let header = info.format == .btsnoop ? 16 : info.format == .pcap ? 24 : 0
        let exact = !info.compressed && info.format != .pcapng
        var previousFrames = 0
        // Failures are collected and recorded once (an `#expect` per prefix was most of the cost).
        var failures: [String] = []
        func check(_ ok: Bool, _ message: @autoclosure () -> String) { if !ok { failures.append(message()) } }
        for n in 0 ..< bytes.count {
            let r = try Self.read(Array(bytes.prefix(n)), name: name)
            guard r.opened else {
                // Only a prefix too short for the file header is not a capture at all.
                check(n < max(header, 1) || info.compressed || info.format == .pcapng || info.format == .packetlogger,
                      "\(name): a prefix of \(n) bytes is no longer a capture")
                continue
            }
            if exact {
                let complete = full.frames.filter { $0.end <= n }.count
                check(r.frames.count == complete, "\(name) cut at \(n): \(r.frames.count) frames, \(complete) complete")
                let boundary = n == header || full.frames.contains { $0.end == n }
                check(r.summary.truncated == !boundary, "\(name) cut at \(n): truncated \(r.summary.truncated)")
                if !boundary, let issue = r.summary.issues.first {
                    let start = complete == 0 ? header : full.frames[complete - 1].end
                    check(issue.offset == start, "\(name) cut at \(n): reported at \(issue.offset), record starts at \(start)")
                    check(issue.frameNumber == complete + 1, "\(name) cut at \(n): frame \(issue.frameNumber), expected \(complete + 1)")
                }
            } else {
                // pcapng (blocks between packets) and gzip (a cut stream): no trap, never more frames
                // than the whole file, never fewer than a shorter prefix gave.
                check(r.frames.count <= full.frames.count, "\(name) cut at \(n): \(r.frames.count) frames, the whole file has \(full.frames.count)")
                check(r.frames.count >= previousFrames || info.compressed, "\(name) cut at \(n): fewer frames than a shorter prefix")
                previousFrames = r.frames.count
            }
        }
        #expect(failures.isEmpty, "\(failures.count) prefixes wrong, first: \(failures.prefix(5))")
    }

    /// Random bit flips anywhere (file header, record headers, payloads): no trap, frames stay inside the file.
    @Test(arguments: names)
    func bitFlipsNeverTrap(name: String) throws {
        let bytes = try #require(Self.files.first { $0.name == name }?.bytes)
        var g = SplitMix64Capture(seed: UInt64(bitPattern: Int64(name.hashValue & 0xFFFF)) | 1)
        for _ in 0 ..< 150 {
            var mutated = bytes
            let flips = 1 + Int(g.next() % 6)
            for _ in 0 ..< flips {
                // Half of the flips land in the first 64 bytes (headers), half anywhere.
                let limit = g.next() & 1 == 0 ? min(64, mutated.count) : mutated.count
                let i = Int(g.next() % UInt64(max(1, limit)))
                mutated[i] ^= UInt8(1) << UInt8(g.next() % 8)
            }
            _ = try Self.read(mutated, name: name)
        }
    }

    /// A length field of 0xFFFFFFFF in the first and in a middle record, for every format: reported
    /// with the record's frame number and offset (memory-mapped formats), the records before it
    /// read, and no allocation near 4 GiB (the resident size stays well under it).
    @Test(arguments: names)
    func lyingLengthIsNotBelieved(name: String) throws {
        let bytes = try #require(Self.files.first { $0.name == name }?.bytes)
        let full = try Self.read(bytes, name: name)
        guard let info = full.info, !info.compressed, full.frames.count > 2 else { return }
        for index in [0, full.frames.count / 2] {
            let record = full.frames[index].recordOffset
            // The length fields of each format, relative to the record header.
            let fields: [Int]
            switch info.format {
            case .btsnoop: fields = [0, 4]           // original length, included length
            case .packetlogger: fields = [0]         // record length
            case .pcap: fields = [8, 12]             // caplen, len
            case .pcapng: fields = []                // block offsets are not what ftell reports; see the fuzz harness
            }
            for field in fields where record >= 0 && record + field + 4 <= bytes.count {
                var mutated = bytes
                for i in 0..<4 { mutated[record + field + i] = 0xFF }
                let before = Self.residentBytes()
                let r = try Self.read(mutated, name: name)
                #expect(Self.residentBytes() - before < 256 << 20, "\(name): reading a 0xFFFFFFFF length grew memory")
                guard r.opened else { continue }
                #expect(r.frames.count >= index, "\(name): records before the lie are read")
                if info.format == .btsnoop && field == 4 || info.format == .packetlogger || info.format == .pcap && field == 8 {
                    #expect(r.frames.count == index, "\(name): the record with the lying length is not delivered")
                    #expect(!r.summary.issues.isEmpty, "\(name): the lie is reported")
                    if info.format != .pcap { #expect(r.summary.issues.first?.offset == record, "\(name)") }
                }
            }
        }
    }

    /// Peak resident set size of this process (`getrusage`), in bytes.
    static func residentBytes() -> Int {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        return Int(usage.ru_maxrss) * 1024
    }
}
