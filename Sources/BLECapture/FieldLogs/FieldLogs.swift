import BLEBytes
import CZlib
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the analyzed capture came from when the input was a field log rather than a capture:
/// an `adb bugreport` zip, a sysdiagnose `.tar.gz`, a zip holding a `.pklg`, or a text file with an
/// Android btsnooz summary.
public struct FieldLogOrigin: Sendable {
    public enum Container: String, Sendable { case zip, tar, text }
    public enum LogKind: String, Sendable {
        case btsnoop, packetlogger, pcap, pcapng
        /// Android's in-memory summary: ACL cut to 14 bytes, ATT values not decidable.
        case btsnooz
    }
    /// One log found inside the container.
    public struct Member: Sendable, Equatable {
        /// Path inside the archive; for a btsnooz summary, the text file's path + `#btsnooz`.
        public var name: String
        public var kind: LogKind
        public var size: Int?
    }

    public var container: Container
    /// The log that was analyzed.
    public var member: Member
    /// Every log found, the analyzed one included, in archive order.
    public var members: [Member]
    /// Set when part of the container could not be read (the logs before it are kept).
    public var problem: String?
    /// The Android build the bugreport was taken on (dumpstate's `Build fingerprint:` header line).
    public var buildFingerprint: String?

    /// The logs that were not analyzed (select one with `FILE#NAME`).
    public var others: [Member] { members.filter { $0 != member } }

    /// One line for the report header and diagnostics.
    public var summary: String {
        var s = "\(container) field log: analyzing \(member.name) (\(member.kind.rawValue))"
        if member.kind == .btsnooz { s += ": ACL cut to 14 bytes by Android, values not decidable" }
        let rest = others
        if !rest.isEmpty { s += "; also inside: " + rest.map(\.name).joined(separator: ", ") + " (select with FILE#NAME)" }
        return s
    }
}

/// Opens field logs: finds the HCI logs inside a container and hands the chosen one back as a
/// temporary capture file that `CaptureFile` then reads like any other.
///
/// Choice when several logs are inside (a bugreport holds `btsnoop_hci.log`, its rotated
/// `btsnoop_hci.log.last`, sometimes `btsnooz_hci.log`, and the btsnooz summary in the dumpstate
/// text): the **current full log** is analyzed — `btsnoop_hci.log`, else a PacketLogger log
/// (`*latest*.pklg` first, then the largest), else another full log, else `.last`, else a
/// truncated `btsnooz` log, else the btsnooz summary. The others are listed in
/// `FieldLogOrigin.others`; `bleanalyze 'bugreport.zip#btsnoop_hci.log.last'` analyzes another
/// (a name matches a member's full path or its last components; `#btsnooz` selects the summary).
public enum FieldLogs {
    /// Longest text entry scanned for a btsnooz summary.
    static let maxScannedText = 1 << 30
    /// Bytes read from each archive entry to recognise a capture.
    static let sniffBytes = 4096

    /// Splits `archive#member` when `path` does not name a file but the part before `#` does.
    public static func splitMemberSelector(_ path: String) -> (path: String, member: String?) {
        if access(path, F_OK) == 0 { return (path, nil) }
        guard let hash = path.lastIndex(of: "#") else { return (path, nil) }
        let base = String(path[..<hash]), member = String(path[path.index(after: hash)...])
        guard !member.isEmpty, access(base, F_OK) == 0 else { return (path, nil) }
        return (base, member)
    }

    /// True when `path` is gzip-compressed and the stream starts with a tar header (a sysdiagnose
    /// `.tar.gz`): libarchive then reads it directly, without inflating it to a temporary file first.
    /// The corresponding C functions are `gzopen`, `gzread` and `gzclose`.
    static func gzipHoldsArchive(_ path: String) -> Bool {
        guard let gz = gzopen(path, "rb") else { return false }
        defer { gzclose(gz) }
        var head = [UInt8](repeating: 0, count: 512)
        let n = head.withUnsafeMutableBytes { gzread(gz, $0.baseAddress, 512) }
        guard n == 512 else { return false }
        return head.withUnsafeBytes { container($0) == .tar }
    }

    /// What the first bytes look like, when it is a container we open.
    static func container(_ bytes: UnsafeRawBufferPointer) -> FieldLogOrigin.Container? {
        if bytes.count >= 4, bytes[0] == 0x50, bytes[1] == 0x4B, bytes[2] == 0x03 || bytes[2] == 0x05,
           bytes[3] == 0x04 || bytes[3] == 0x06 { return .zip }
        if bytes.count >= 262, Array(bytes[257 ..< 262]) == Array("ustar".utf8) { return .tar }
        if Btsnooz.section(in: bytes) != nil { return .text }
        return nil
    }

    /// If `bytes` (the contents of `readPath`) are a field-log container, extracts the chosen log
    /// into a temporary file (the caller unlinks it) and says where it came from; nil otherwise.
    /// - Throws: `CaptureError` when it is a container but holds no log we can read.
    static func resolve(readPath: String, bytes: UnsafeRawBufferPointer, displayPath: String,
                        member selector: String?) throws(CaptureError) -> (path: String, origin: FieldLogOrigin)? {
        let gzipped = bytes.count >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b
        guard let container = gzipped ? (gzipHoldsArchive(readPath) ? .tar : nil) : container(bytes) else {
            if selector != nil {
                throw CaptureError(path: displayPath, offset: 0, reason: "not a zip, tar or btsnooz text: no member to select")
            }
            return nil
        }
        switch container {
        case .text:
            let member = FieldLogOrigin.Member(name: "btsnooz", kind: .btsnooz, size: bytes.count)
            let path = try btsnoozToTemporaryFile(bytes, displayPath: displayPath)
            var origin = FieldLogOrigin(container: .text, member: member, members: [member])
            origin.buildFingerprint = BuildFingerprint.find(in: bytes)
            return (path, origin)
        case .zip, .tar:
            return try resolveArchive(readPath: readPath, container: container, displayPath: displayPath, selector: selector)
        }
    }

    private static func btsnoozToTemporaryFile(_ text: [UInt8], displayPath: String) throws(CaptureError) -> String {
        var result: Result<String, CaptureError> = .failure(CaptureError(path: displayPath, reason: "empty"))
        text.withUnsafeBytes { b in
            do throws(CaptureError) { result = .success(try btsnoozToTemporaryFile(b, displayPath: displayPath)) } catch { result = .failure(error) }
        }
        return try result.get()
    }

    private static func btsnoozToTemporaryFile(_ bytes: UnsafeRawBufferPointer, displayPath: String) throws(CaptureError) -> String {
        guard let range = Btsnooz.section(in: bytes) else {
            throw CaptureError(path: displayPath, offset: 0, reason: "no BTSNOOP_LOG_SUMMARY section")
        }
        guard range.count <= Btsnooz.maxSectionBytes else {
            throw CaptureError(path: displayPath, offset: range.lowerBound, reason: "btsnooz section of \(range.count) bytes is larger than any summary")
        }
        let log: Btsnooz.Log
        do { log = try Btsnooz.decode(sectionText: UnsafeRawBufferPointer(rebasing: bytes[range])) } catch {
            throw CaptureError(path: displayPath, offset: range.lowerBound, reason: error.reason)
        }
        return try TemporaryFile.write(Btsnooz.btsnoop(log), for: displayPath)
    }

    /// What an archive entry holds, from its name and first bytes.
    static func classify(name: String, head: [UInt8]) -> FieldLogOrigin.LogKind? {
        head.withUnsafeBytes { b -> FieldLogOrigin.LogKind? in
            switch FormatSniffer.guess(b) {
            case .btsnoop: return .btsnoop
            case .pcap: return bluetoothPcapLinkType(b) ? .pcap : nil
            case .pcapng: return bluetoothPcapngLinkType(b) ? .pcapng : nil
            case .packetlogger:
                // Any binary file can look like PacketLogger records; believe it by name only.
                return name.lowercased().hasSuffix(".pklg") ? .packetlogger : nil
            case .gzip:
                // A compressed log (`btsnoop_hci.log.gz`, `….pklg.gz`): by name; CaptureFile inflates it.
                let lower = name.lowercased()
                if lower.contains(".pklg") { return .packetlogger }
                if lower.contains("btsnoop") || lower.contains("hci") || lower.contains(".cfa") { return .btsnoop }
                return nil
            default: return nil
            }
        }
    }

    private static func isBluetoothLinkType(_ dlt: UInt32) -> Bool {
        [Datalink.pcapH4, Datalink.pcapH4WithPHDR, Datalink.pcapMonitor].contains(dlt) || Datalink.isAirCapture(dlt)
    }

    private static func bluetoothPcapLinkType(_ b: UnsafeRawBufferPointer) -> Bool {
        guard b.count >= 24 else { return false }
        let swapped = b[0] == 0xd4 || b[0] == 0x4d
        let dlt = swapped ? b.loadLE32(at: 20) : b.loadBE32(at: 20)
        return isBluetoothLinkType(dlt & 0x0FFF_FFFF)
    }

    private static func bluetoothPcapngLinkType(_ b: UnsafeRawBufferPointer) -> Bool {
        guard b.count >= 12 else { return false }
        let little = b[8] == 0x4d   // byte-order magic 0x1A2B3C4D
        let load = { (o: Int) -> UInt32 in little ? b.loadLE32(at: o) : b.loadBE32(at: o) }
        let shbLength = Int(load(4))
        guard shbLength >= 28, shbLength <= b.count - 16 else { return false }
        let type = load(shbLength)
        guard type == 1 else { return false }   // Interface Description Block
        let r = ByteReader(b)
        guard let dlt = little ? r.getU16le(at: shbLength + 8) : r.getU16be(at: shbLength + 8) else { return false }   // IDB LinkType
        return isBluetoothLinkType(UInt32(dlt))
    }

    /// Rank of a log for "the main one" (lower is better).
    static func rank(_ m: FieldLogOrigin.Member) -> Int {
        let base = m.name.split(separator: "/").last.map(String.init)?.lowercased() ?? m.name.lowercased()
        switch m.kind {
        case .btsnooz: return 6
        case .packetlogger: return base.contains("latest") ? 1 : 2
        default:
            if base == "btsnoop_hci.log" || base == "btsnoop_hci.cfa" { return 0 }
            if base.contains("snooz") { return 5 }
            if base.hasSuffix(".last") || base.contains(".last.") { return 4 }
            return 3
        }
    }

    static func choose(_ members: [FieldLogOrigin.Member], selector: String?) -> FieldLogOrigin.Member? {
        if let selector {
            if let m = members.first(where: { $0.name == selector }) { return m }
            if selector == "btsnooz", let m = members.first(where: { $0.kind == .btsnooz }) { return m }
            return members.first { $0.name.hasSuffix("/" + selector) }
        }
        return members.enumerated().min { a, b in
            let ra = rank(a.element), rb = rank(b.element)
            if ra != rb { return ra < rb }
            if (a.element.size ?? 0) != (b.element.size ?? 0) { return (a.element.size ?? 0) > (b.element.size ?? 0) }
            return a.offset < b.offset
        }?.element
    }

    private static func resolveArchive(readPath: String, container: FieldLogOrigin.Container, displayPath: String,
                                       selector: String?) throws(CaptureError) -> (path: String, origin: FieldLogOrigin) {
        // Pass 1: list the logs (capture files by their first bytes, btsnooz summaries in text files).
        var members: [FieldLogOrigin.Member] = []
        var summaries: [String: [UInt8]] = [:]
        var problem: String?
        var fingerprint: String?
        do {
            let archive = try ArchiveReader(path: readPath)
            while let entry = archive.next() {
                let head = archive.read(upTo: sniffBytes)
                if let kind = classify(name: entry.name, head: head) {
                    members.append(.init(name: entry.name, kind: kind, size: entry.size))
                } else if entry.name.lowercased().hasSuffix(".txt"), (entry.size ?? 0) <= maxScannedText {
                    if fingerprint == nil { fingerprint = BuildFingerprint.find(in: head) }
                    if let section = scanForBtsnooz(head: head, archive) {
                        let name = entry.name + "#btsnooz"
                        summaries[name] = section
                        members.append(.init(name: name, kind: .btsnooz, size: section.count))
                    }
                }
            }
            problem = archive.problem
        }
        guard let chosen = choose(members, selector: selector) else {
            if let selector {
                throw CaptureError(path: displayPath, offset: 0, reason: "no log named \(selector) inside; logs: "
                                   + (members.isEmpty ? "none" : members.map(\.name).joined(separator: ", ")))
            }
            throw CaptureError(path: displayPath, offset: 0, reason: "\(container) archive holds no HCI log "
                               + "(no btsnoop, pcap, .pklg or btsnooz summary)" + (problem.map { " (\($0))" } ?? ""))
        }
        var origin = FieldLogOrigin(container: container, member: chosen, members: members, problem: problem)
        origin.buildFingerprint = fingerprint
        if chosen.kind == .btsnooz, let text = summaries[chosen.name] {
            return (try btsnoozToTemporaryFile(text, displayPath: displayPath + "#" + chosen.name), origin)
        }
        // Pass 2: extract the chosen log.
        let archive = try ArchiveReader(path: readPath)
        while let entry = archive.next(), entry.name != chosen.name {}
        guard archive.problem == nil else {
            throw CaptureError(path: displayPath, reason: "archive: \(archive.problem ?? "") before \(chosen.name)")
        }
        return (try archive.extractToTemporaryFile(), origin)
    }

    /// Streams a text entry looking for the btsnooz section; returns the section text (BEGIN line
    /// through END marker), bounded by `Btsnooz.maxSectionBytes`.
    private static func scanForBtsnooz(head: [UInt8], _ archive: ArchiveReader) -> [UInt8]? {
        var window: [UInt8] = []     // the unmatched tail of what was read, then the new chunk
        var section: [UInt8] = []    // collected from the BEGIN marker on
        var found = false
        func absorb(_ chunk: UnsafeRawBufferPointer) -> Bool {
            if found {
                let from = max(0, section.count - Btsnooz.endMarker.count)
                section.append(contentsOf: chunk)
                return section.count <= Btsnooz.maxSectionBytes && !contains(Btsnooz.endMarker, section, from: from)
            }
            window.append(contentsOf: chunk)
            if let at = window.withUnsafeBytes({ Btsnooz.find(Btsnooz.beginMarker, in: $0, from: 0) }) {
                found = true
                section = Array(window[at...])
                window = []
                return !contains(Btsnooz.endMarker, section, from: 0)
            }
            let keep = Btsnooz.beginMarker.count
            if window.count > keep { window.removeFirst(window.count - keep) }
            return true
        }
        if head.withUnsafeBytes({ absorb($0) }) { archive.stream { absorb($0) } }
        return found ? section : nil
    }

    private static func contains(_ needle: [UInt8], _ hay: [UInt8], from: Int) -> Bool {
        hay.withUnsafeBytes { b in Btsnooz.find(needle, in: UnsafeRawBufferPointer(rebasing: b[from...]), from: 0) != nil }
    }
}
