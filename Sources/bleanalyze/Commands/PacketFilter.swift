import ArgumentParser
import BLEAnalysis
import BLECapture
import BLEProtocol

/// Filters for `packets`: protocol layers (OR-ed), a connection and a time range (AND-ed).
struct PacketFilterOptions: ParsableArguments {
    @Option(name: .long, help: "Only frames of this connection: a handle (64, 0x0040) or a peer address (C0:FF:EE:00:00:01).")
    var conn: String?
    @Flag(name: .long, help: "Frames carrying ATT.") var att = false
    @Flag(name: .long, help: "Frames carrying SMP.") var smp = false
    @Flag(name: .long, help: "Advertising: reports and the host's advertising commands.") var adv = false
    @Flag(name: .long, help: "HCI commands and events (no data packets).") var hci = false
    @Option(name: .long, help: "Start this many seconds after the first frame.") var since: Double?
    @Option(name: .long, help: "Stop this many seconds after the first frame.") var until: Double?

    var isActive: Bool { conn != nil || att || smp || adv || hci || since != nil || until != nil }

    /// The connection argument, parsed once.
    func connectionFilter() throws -> ConnectionFilter? {
        guard let conn else { return nil }
        if let a = BDAddr(string: conn) { return .address(a) }
        let digits = conn.lowercased().hasPrefix("0x") ? String(conn.dropFirst(2)) : conn
        guard let h = UInt16(digits, radix: conn.lowercased().hasPrefix("0x") ? 16 : 10), h <= 0x0EFF else {
            throw ValidationError("--conn takes a connection handle or a Bluetooth address, not \(conn)")
        }
        return .handle(h)
    }
}

enum ConnectionFilter {
    case handle(UInt16)
    case address(BDAddr)
}

/// Decides, per frame, whether `packets` prints it.
struct PacketFilter {
    let options: PacketFilterOptions
    let connection: ConnectionFilter?
    /// `options.isActive`, read once: argument-parser property wrappers are slow to read per frame.
    private(set) var active: Bool
    private var start: Int64?

    init(_ options: PacketFilterOptions) throws {
        self.options = options
        connection = try options.connectionFilter()
        active = options.isActive
    }

    mutating func accepts(_ frame: Frame, layers: [Layer], session: SessionModel) -> Bool {
        guard active else { return true }
        if start == nil { start = frame.timestamp }
        let t = Double(frame.timestamp - (start ?? frame.timestamp)) / 1e6
        if let since = options.since, t < since { return false }
        if let until = options.until, t > until { return false }
        if let connection, !matches(connection, layers, frame: frame, session: session) { return false }
        let protocols = options.att || options.smp || options.adv || options.hci
        guard protocols else { return true }
        let names = layers.map { $0.protocolName.description }
        if options.att, names.contains("ATT") { return true }
        if options.smp, names.contains("SMP") { return true }
        if options.hci, frame.kind == .command || frame.kind == .event { return true }
        if options.adv, layers.contains(where: { $0.name.contains("Advertising") || $0.fields.contains { $0.nameString == "Subevent" && Self.isAdvertising($0.value) } }) {
            return true
        }
        return false
    }

    static func isAdvertising(_ v: FieldValue) -> Bool {
        if case let .integer(code, _) = v { return [0x02, 0x0B, 0x0D, 0x12, 0x13].contains(code) }
        return false
    }

    private func matches(_ filter: ConnectionFilter, _ layers: [Layer], frame: Frame, session: SessionModel) -> Bool {
        switch filter {
        case let .handle(h):
            return layers.contains { Self.contains($0.fields) { name, value in
                if name.hasSuffix("Handle"), !name.contains("Attribute"), !name.contains("Advertising"), !name.contains("Sync"),
                   case let .integer(v, _) = value { return v == UInt64(h) }
                return false
            } }
        case let .address(a):
            let handles = Set(session.connections.filter { $0.peerAddress == a && $0.adapter == frame.adapter }.map(\.handle))
            return layers.contains { Self.contains($0.fields) { name, value in
                if case let .address(x, _) = value { return x == a }
                if name.hasSuffix("Handle"), !name.contains("Attribute"), case let .integer(v, _) = value {
                    return handles.contains(UInt16(truncatingIfNeeded: v))
                }
                return false
            } }
        }
    }

    /// Whether any field, at any depth, satisfies `test`.
    static func contains(_ fields: [Field], _ test: (String, FieldValue) -> Bool) -> Bool {
        for f in fields {
            if test(f.nameString, f.value) { return true }
            switch f.value {
            case let .group(children): if contains(children, test) { return true }
            case let .list(items): if items.contains(where: { contains($0, test) }) { return true }
            default: break
            }
        }
        return false
    }
}
