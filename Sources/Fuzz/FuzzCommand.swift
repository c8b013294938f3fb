import BLEBytes
import BLECapture
import BLEProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The corpus-replay runner and the seed-corpus maker (what `Fuzz` does without libFuzzer).
enum FuzzCommand {
    static let usage = """
        usage: Fuzz HARNESS FILE|DIR...                     replay inputs through a harness (\(Harness.allCases.map(\.rawValue).joined(separator: ", ")))
               Fuzz seed HARNESS OUTDIR CAPTURE...          write seed inputs made from captures
               Fuzz seed-hex HARNESS OUTDIR HEXFILE...      write seed inputs from hex lines (test vectors)
        """

    static func main(_ arguments: [String]) -> Int32 {
        let args = Array(arguments.dropFirst())
        guard let first = args.first else { printError(usage + "\n"); return 2 }
        switch first {
        case "seed", "seed-hex":
            guard args.count >= 3, let harness = Harness(rawValue: args[1]) else { printError(usage + "\n"); return 2 }
            let out = args[2]
            Files.makeDirectories(out)
            var written = 0
            for path in args.dropFirst(3) {
                let inputs = first == "seed" ? Seeds.fromCapture(path, harness) : Seeds.fromHexFile(path, harness)
                for input in inputs where !input.isEmpty {
                    if Scratch.write(input, to: out + "/" + Seeds.name(input)) { written += 1 }
                }
            }
            print("\(harness.rawValue): \(written) seed inputs in \(out)")
            return 0
        default:
            guard let harness = Harness(rawValue: first), args.count >= 2 else { printError(usage + "\n"); return 2 }
            return replay(harness, paths: Array(args.dropFirst()))
        }
    }

    /// Runs every file (directories are walked) through `harness`; 1 when an invariant broke.
    static func replay(_ harness: Harness, paths: [String]) -> Int32 {
        var files: [String] = []
        for p in paths { Files.collect(p, into: &files) }
        var failed = 0
        for f in files.sorted() {
            guard let bytes = Files.read(f) else { printError("cannot read \(f)\n"); failed += 1; continue }
            let violations = harness.run(bytes)
            if !violations.isEmpty {
                failed += 1
                for v in violations { printError("\(f): invariant broken: \(v)\n") }
            }
        }
        print("\(harness.rawValue): replayed \(files.count) inputs, \(failed) failed")
        return failed == 0 ? 0 : 1
    }
}

/// Small file helpers without Foundation.
enum Files {
    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Regular files under `path` (recursively), or `path` itself.
    static func collect(_ path: String, into files: inout [String]) {
        guard isDirectory(path) else { files.append(path); return }
        guard let dir = opendir(path) else { return }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)   // safe: d_name is a NUL-terminated array
            }
            if name.hasPrefix(".") { continue }
            collect(path + "/" + name, into: &files)
        }
    }

    /// `mkdir -p`.
    static func makeDirectories(_ path: String) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            prefix += "/" + part
            mkdir(prefix, 0o755)
        }
    }

    static func read(_ path: String) -> [UInt8]? {
        guard let file = try? MappedFile(path: path) else { return nil }
        return file.withBytes { Array($0) }
    }
}

/// Seed inputs in each harness's encoding, made from captures and from hex test vectors.
enum Seeds {
    /// FNV-1a of the content: the same input is written once.
    static func name(_ bytes: [UInt8]) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0100_0000_01b3 }
        return Hex.pad(h, 16)
    }

    /// Largest pipeline seed, in records: long captures become several seeds.
    static let pipelineWindow = 400

    static func fromCapture(_ path: String, _ harness: Harness) -> [[UInt8]] {
        if harness == .capture { return Files.read(path).map { [$0] } ?? [] }
        guard let file = try? CaptureFile(path: path) else { return [] }
        let records = file.records().records
        switch harness {
        case .capture:
            return []
        case .hci:
            var seen = Set<[UInt8]>()
            var out: [[UInt8]] = []
            for r in records {
                guard let raw = HCIHarness.selector(r.kind) else { continue }
                let cut: UInt8 = (r.originalLength ?? r.payload.count) > r.payload.count ? 0x80 : 0
                let input = [raw | cut] + r.payload
                if seen.insert(input).inserted { out.append(input) }
            }
            return out
        case .l2cap:
            var all: [UInt8] = []
            var out: [[UInt8]] = []
            for r in records where r.kind == .aclData {
                guard let header = r.payload.withReader({ HCIPacketHeader.acl($0) }) else { continue }
                let start = header.isStart
                let handleSel = UInt8(header.handle & 3)
                let fragments = L2CAPHarness.encode(Array(r.payload.dropFirst(4)), start: start, received: r.direction == .received, handle: handleSel)
                all += fragments
                if start { out.append(fragments) }
                if all.count > 8192 { out.append(all); all = [] }
            }
            if !all.isEmpty { out.append(all) }
            return out
        case .pipeline:
            var out: [[UInt8]] = []
            var i = 0
            // Each window in the capture's own container kind, and the first one in every container.
            let own: PipelineHarness.Container = file.info.format == .packetlogger ? .packetLoggerLE
                : file.info.datalink == Datalink.btsnoopMonitor ? .btsnoopMonitor : .btsnoopH4
            while i < records.count {
                let window = Array(records[i ..< min(records.count, i + pipelineWindow)])
                out.append(PipelineHarness.encode(window, container: own))
                if i == 0 { for c in PipelineHarness.Container.allCases where c != own { out.append(PipelineHarness.encode(window, container: c)) } }
                i += pipelineWindow
            }
            return out
        }
    }

    /// One hex vector per line (blank lines and non-hex lines skipped), wrapped for the harness.
    static func fromHexFile(_ path: String, _ harness: Harness) -> [[UInt8]] {
        guard let text = Files.read(path) else { return [] }
        var out: [[UInt8]] = []
        for line in String(decoding: text, as: UTF8.self).split(separator: "\n") {
            guard let v = Hex.bytes(String(line)), !v.isEmpty else { continue }
            switch harness {
            case .capture: out.append(v)
            case .hci: out += [[0] + v, [3] + v, [1] + v]
            case .l2cap:
                for cid: UInt8 in [0x04, 0x05, 0x06] {
                    let pdu = [UInt8(v.count & 0xFF), UInt8(v.count >> 8 & 0xFF), cid, 0] + v
                    out.append(L2CAPHarness.encode(pdu, start: true, received: cid == 4, handle: 0))
                }
            case .pipeline:
                out.append(PipelineHarness.encode([
                    RecordToWrite(timestamp: 0, direction: .received, kind: .event, payload: v),
                    RecordToWrite(timestamp: 0, direction: .sent, kind: .command, payload: v),
                    RecordToWrite(timestamp: 0, direction: .received, kind: .aclData, payload: [0x40, 0x20, UInt8(truncatingIfNeeded: v.count + 4), 0, UInt8(truncatingIfNeeded: v.count), 0, 4, 0] + v),
                ]))
            }
        }
        return out
    }
}

extension HCIHarness {
    /// The selector byte for a frame kind (`% 5 + 1` gives the H4 type back).
    static func selector(_ kind: FrameKind) -> UInt8? {
        switch kind {
        case .command: 0
        case .aclData: 1
        case .scoData: 2
        case .event: 3
        case .isoData: 4
        default: nil
        }
    }
}

extension L2CAPHarness {
    /// ACL data as harness fragments of at most 255 bytes (the first one marked as a start when it is).
    static func encode(_ data: [UInt8], start: Bool, received: Bool, handle: UInt8) -> [UInt8] {
        var out: [UInt8] = []
        var offset = 0
        var first = true
        repeat {
            let n = min(255, data.count - offset)
            let flags: UInt8 = (first && start ? 1 : 0) | (received ? 2 : 0) | (handle & 3) << 2
            out += [flags, UInt8(n)] + data[offset ..< offset + n]
            offset += n
            first = false
        } while offset < data.count
        return out
    }
}
