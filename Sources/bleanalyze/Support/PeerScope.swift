import BLEBytes
import ArgumentParser
import BLEAnalysis
import BLEProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--peer NAME|ADDR` (report, `check`, `timeline`, `adv`): scope to the device under test. An
/// address (`C0:11:22:33:44:55`) matches the peer's address; anything else matches its name
/// (advertised or GAP Device Name, as the report names it), whole and ignoring case.
struct PeerScope {
    let text: String
    let address: BDAddr?

    init(_ text: String) {
        self.text = text
        address = BDAddr(string: text)
    }

    func matches(address a: BDAddr?, names: [String]) -> Bool {
        if let address { return a == address }
        return names.contains { $0.lowercased() == text.lowercased() }
    }

    func matches(_ c: Connection) -> Bool { matches(address: c.peerAddress, names: c.peerName.map { [$0] } ?? []) }

    func matches(_ a: Advertisers.Advertiser) -> Bool { matches(address: a.address, names: a.names) }

    /// A finding about a connection is kept when its peer matches; one about no connection (the
    /// capture as a whole) is kept unless it names another peer.
    func matches(_ f: Finding, _ model: SessionModel) -> Bool {
        if let i = f.connectionIndex, let c = model.connections.first(where: { $0.index == i }) { return matches(c) }
        if let label = f.peer {
            if let address { return label.contains(address.description) }
            return f.peerName.map { $0.lowercased() == text.lowercased() } ?? false
        }
        // No connection: a finding whose sentence names devices (a refused attempt, an advertiser) is
        // about them; one that names none is about the capture.
        let named = AddressInText.addresses(in: f.text)
        guard !named.isEmpty else { return true }
        return named.contains { a in
            matches(address: a, names: model.advertisers.all.filter { $0.address == a }.flatMap(\.names)
                                       + model.connections.filter { $0.peerAddress == a }.compactMap(\.peerName))
        }
    }

    /// Whether the capture shows the peer at all (a connection to it, or its advertising).
    func seen(in model: SessionModel) -> Bool {
        model.connections.contains(where: matches) || model.advertisers.all.contains(where: matches)
            // A long session's summarised connections.
            || model.summarised.contains { matches(address: $0.peerAddress, names: $0.peerName.map { [$0] } ?? []) }
            || model.foldedRows.peers.contains { matches(address: $0, names: []) }
    }
}

/// `check --baseline FILE`: findings accepted before; only findings beyond it fail the gate. The file
/// is text, one entry a line, tab-separated: `RULE<TAB>PEER<TAB>ATTRIBUTE<TAB>COUNT<TAB>SEVERITY`;
/// `#` starts a comment.
/// - PEER: `*` any peer; `-` findings about no peer; else one or more alternatives separated by
///   `|`, any of which matches: an address (the peer's address or its identity address: a
///   resolvable private address that rotates matches once the peer paired, on that link or on a
///   later one that encrypts with the bond's key); `gatt:` and 8 hex digits, the fingerprint of
///   the peer's GATT table (`CaptureProfile.GATTTable.fingerprint`: what `redact` keeps, so a
///   redacted copy matches); anything else a name (advertised or GAP), whole, ignoring case.
/// - ATTRIBUTE: the handle the finding names (`0x0005`), `-` none, `*` any.
/// - COUNT: accept up to N such findings; `*` any number. SEVERITY: the highest accepted (`info`,
///   `warning`, `error`); `*` any. A line of three fields (files written before counts) accepts any
///   number at any severity, as it did.
/// `check --write-baseline FILE` writes it from the findings at or above `--fail-on`: the peer by
/// name when the capture knows one (address rotation keeps it), else by identity address, else by
/// address, then `|gatt:…` when the capture shows its GATT table (plain `redact` replaces names
/// and addresses but keeps the table); the count and highest severity seen.
struct Baseline {
    struct Key: Hashable, Comparable {
        var rule: String
        /// The peer: `*`, a name, an address, or "-".
        var peer: String
        /// The attribute handle the finding is about ("0x0005"), "-" or "*".
        var attribute: String
        static func < (a: Key, b: Key) -> Bool { (a.rule, a.peer, a.attribute) < (b.rule, b.peer, b.attribute) }
    }

    struct Entry {
        var key: Key
        /// nil: any number.
        var count: Int?
        /// nil: any severity.
        var severity: Severity?
        var line: Int
    }

    private(set) var entries: [Entry] = []

    init(entries: [Entry] = []) { self.entries = entries }

    /// Reads FILE; a line that is not 3 to 5 fields, or a bad count or severity, is an error naming its number.
    init(path: String) throws(ValidationError) {
        guard let text = Self.read(path) else { throw ValidationError("--baseline: cannot read \(path)") }
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            let expected = "expected RULE<TAB>PEER<TAB>ATTRIBUTE[<TAB>COUNT[<TAB>SEVERITY]]"
            guard (3...5).contains(fields.count), !fields[0].isEmpty else {
                throw ValidationError("--baseline \(path) line \(n + 1): \(expected), got \"\(line)\"")
            }
            var entry = Entry(key: Key(rule: fields[0], peer: fields[1], attribute: fields[2]), line: n + 1)
            if fields.count > 3, fields[3] != "*" {
                guard let c = Int(fields[3]), c >= 0 else {
                    throw ValidationError("--baseline \(path) line \(n + 1): COUNT is a number or *, not \"\(fields[3])\"")
                }
                entry.count = c
            }
            if fields.count > 4, fields[4] != "*" {
                guard let s = Severity(rawValue: fields[4]) else {
                    throw ValidationError("--baseline \(path) line \(n + 1): SEVERITY is info, warning, error or *, not \"\(fields[4])\"")
                }
                entry.severity = s
            }
            entries.append(entry)
        }
    }

    /// What names a finding's peer: its names, addresses (address and identity address) and GATT
    /// table fingerprint.
    struct Identity {
        var names: [String] = []
        var addresses: [BDAddr] = []
        var gatt: String?
        var none: Bool { names.isEmpty && addresses.isEmpty && gatt == nil }
    }

    /// The GATT table fingerprint of each connection's peer (by connection index), from the table
    /// the capture shows on any of that peer's links (a reconnection that skips discovery has the
    /// table of its first link: peers grouped as `diff` groups them).
    static func gattPrints(_ model: SessionModel) -> [Int: String] {
        var prints: [Int: String] = [:]
        for peer in CaptureProfile(model, findings: [], frames: 0).peers {
            guard let print = peer.gatt?.fingerprint else { continue }
            for c in peer.connections { prints[c.index] = print }
        }
        return prints
    }

    static func identity(_ f: Finding, _ model: SessionModel, gatt prints: [Int: String]) -> Identity {
        var id = Identity()
        if let i = f.connectionIndex, let c = model.connections.first(where: { $0.index == i }) {
            id.names += c.peerName.map { [$0] } ?? []
            id.addresses += [c.peerAddress, c.peerIdentityAddress].compactMap { $0 }
            id.gatt = prints[i].map { "gatt:" + $0 }
        }
        if let n = f.peerName, !id.names.contains(n) { id.names.append(n) }
        if id.addresses.isEmpty {
            id.addresses = f.peer.flatMap { p in AddressInText.addresses(in: p).first.map { [$0] } } ?? AddressInText.addresses(in: f.text).prefix(1).map { $0 }
        }
        return id
    }

    /// How `--write-baseline` names the peer: its name, else identity address, else address; then
    /// `|gatt:…` when its GATT table is known (`gattPrints`).
    static func key(_ f: Finding, _ model: SessionModel, gatt prints: [Int: String]) -> Key {
        var peer = "-"
        if let i = f.connectionIndex, let c = model.connections.first(where: { $0.index == i }) {
            let named = c.peerName ?? c.peerIdentityAddress?.description ?? c.peerAddress?.description
            peer = ([named] + [prints[i].map { "gatt:" + $0 }]).compactMap { $0 }.joined(separator: "|")
            if peer.isEmpty { peer = "-" }
        } else if let p = f.peerName ?? f.peer {
            peer = p
        } else if let a = AddressInText.addresses(in: f.text).first {
            peer = a.description
        }
        return Key(rule: f.rule, peer: peer, attribute: attribute(f) ?? "-")
    }

    /// The attribute a finding is about: its typed `handle` ("0x0005"), never read from the sentence.
    static func attribute(_ f: Finding) -> String? {
        f.handle.map { "0x" + Hex.pad($0, 4) }
    }

    func matches(_ e: Entry, _ f: Finding, _ id: Identity) -> Bool {
        guard e.key.rule == f.rule else { return false }
        let attr = Self.attribute(f) ?? "-"
        guard e.key.attribute == "*" || e.key.attribute.lowercased() == attr.lowercased() else { return false }
        switch e.key.peer {
        case "*": return true
        case "-": return id.none
        case let peer:
            return peer.split(separator: "|").contains { alternative in
                let p = String(alternative)
                if p.lowercased().hasPrefix("gatt:") { return id.gatt?.lowercased() == p.lowercased() }
                if let a = BDAddr(string: p) { return id.addresses.contains(a) }
                return id.names.contains { $0.lowercased() == p.lowercased() } || (id.names.isEmpty && f.peer == p)
            }
        }
    }

    /// Judges the findings at or above the level in order: each is accepted by the first entry that
    /// matches it, allows its severity and has count left; else it fails, with why (`reasons`: the
    /// count or severity it exceeds).
    func judge(_ findings: [(index: Int, finding: Finding)], _ model: SessionModel) -> (accepted: Set<Int>, failing: [Int], reasons: [Int: String]) {
        var used = [Int](repeating: 0, count: entries.count)
        var accepted: Set<Int> = [], failing: [Int] = [], reasons: [Int: String] = [:]
        let prints = findings.isEmpty ? [:] : Self.gattPrints(model)
        for (i, f) in findings {
            let id = Self.identity(f, model, gatt: prints)
            let candidates = entries.indices.filter { matches(entries[$0], f, id) }
            if let e = candidates.first(where: { e in
                (entries[e].severity.map { f.severity <= $0 } ?? true) && (entries[e].count.map { used[e] < $0 } ?? true)
            }) {
                used[e] += 1
                accepted.insert(i)
                continue
            }
            failing.append(i)
            if let e = candidates.first(where: { e in entries[e].severity.map { f.severity > $0 } ?? false }) {
                reasons[i] = "\(f.severity.rawValue) is above the \(entries[e].severity?.rawValue ?? "") the baseline accepts (line \(entries[e].line))"
            } else if let e = candidates.first {
                reasons[i] = "more than the \(entries[e].count ?? 0) the baseline accepts (line \(entries[e].line))"
            }
        }
        return (accepted, failing, reasons)
    }

    /// The file's text for these findings' keys, with how many of each and the highest severity.
    static func render(_ counts: [Key: (count: Int, severity: Severity)], command: String) -> String {
        var s = "# bleanalyze check baseline: accepted findings,\n"
        s += "# RULE<TAB>PEER<TAB>ATTRIBUTE<TAB>COUNT<TAB>SEVERITY (PEER: name, address, gatt:TABLE, several joined by |, or *;\n"
        s += "# - for none; COUNT/SEVERITY: up to; * any)\n"
        s += "# written by: \(command)\n"
        for (k, v) in counts.sorted(by: { $0.key < $1.key }) {
            s += "\(k.rule)\t\(k.peer)\t\(k.attribute)\t\(v.count)\t\(v.severity.rawValue)\n"
        }
        return s
    }

    private static func read(_ path: String) -> String? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, f)
            if n > 0 { bytes += buffer[0..<n] }
            if n < buffer.count { break }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
