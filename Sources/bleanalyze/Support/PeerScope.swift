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
        let named = Self.addresses(in: f.text)
        guard !named.isEmpty else { return true }
        return named.contains { a in
            matches(address: a, names: model.advertisers.all.filter { $0.address == a }.flatMap(\.names)
                                       + model.connections.filter { $0.peerAddress == a }.compactMap(\.peerName))
        }
    }

    /// The Bluetooth addresses written in a sentence ("C0:11:22:33:44:04").
    static func addresses(in text: String) -> [BDAddr] {
        let u = Array(text.utf8)
        var found: [BDAddr] = []
        var i = 0
        while i + 17 <= u.count {
            if u[i + 2] == UInt8(ascii: ":"), let a = BDAddr(string: String(decoding: u[i ..< i + 17], as: UTF8.self)),
               i == 0 || !Self.isHex(u[i - 1]), i + 17 == u.count || !Self.isHex(u[i + 17]) {
                found.append(a)
                i += 17
            } else {
                i += 1
            }
        }
        return found
    }

    private static func isHex(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102) || c == UInt8(ascii: ":")
    }

    /// Whether the capture shows the peer at all (a connection to it, or its advertising).
    func seen(in model: SessionModel) -> Bool {
        model.connections.contains(where: matches) || model.advertisers.all.contains(where: matches)
    }
}

/// `check --baseline FILE`: findings accepted before, by rule, peer and attribute; only findings
/// not in it fail the gate. The file is text, one accepted finding a line, tab-separated:
/// `RULE<TAB>PEER<TAB>ATTRIBUTE`, `-` for "none"; `#` starts a comment. `check --write-baseline FILE`
/// writes it from the findings at or above `--fail-on`.
struct Baseline {
    struct Key: Hashable, Comparable {
        var rule: String
        /// The peer's address, else its name, else "-".
        var peer: String
        /// The attribute handle the finding is about ("0x0005"), else "-".
        var attribute: String
        static func < (a: Key, b: Key) -> Bool { (a.rule, a.peer, a.attribute) < (b.rule, b.peer, b.attribute) }
    }

    private(set) var accepted: Set<Key> = []

    init(keys: Set<Key> = []) { accepted = keys }

    /// Reads FILE; a line that is not three fields is an error naming its number.
    init(path: String) throws(ValidationError) {
        guard let text = Self.read(path) else { throw ValidationError("--baseline: cannot read \(path)") }
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 3, !fields[0].isEmpty else {
                throw ValidationError("--baseline \(path) line \(n + 1): expected RULE<TAB>PEER<TAB>ATTRIBUTE, got \"\(line)\"")
            }
            accepted.insert(Key(rule: fields[0], peer: fields[1], attribute: fields[2]))
        }
    }

    static func key(_ f: Finding, _ model: SessionModel) -> Key {
        var peer = "-"
        if let i = f.connectionIndex, let c = model.connections.first(where: { $0.index == i }) {
            peer = c.peerAddress?.description ?? c.peerName ?? "-"
        } else if let p = f.peerName ?? f.peer {
            peer = p
        } else if let a = PeerScope.addresses(in: f.text).first {
            peer = a.description
        }
        return Key(rule: f.rule, peer: peer, attribute: attribute(f) ?? "-")
    }

    /// The attribute a finding is about: its typed `handle` ("0x0005"), never read from the sentence.
    static func attribute(_ f: Finding) -> String? {
        f.handle.map { "0x" + Hex.pad($0, 4) }
    }

    func accepts(_ f: Finding, _ model: SessionModel) -> Bool { accepted.contains(Self.key(f, model)) }

    /// The file's text for `keys`.
    static func render(_ keys: Set<Key>, command: String) -> String {
        var s = "# bleanalyze check baseline: accepted findings, RULE<TAB>PEER<TAB>ATTRIBUTE (- for none)\n"
        s += "# written by: \(command)\n"
        for k in keys.sorted() { s += "\(k.rule)\t\(k.peer)\t\(k.attribute)\n" }
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
