import BLEBytes

/// Where a decoded field lies in the capture, reported while `FieldDecoder` reads it: the hook that
/// lets redaction find addresses, key material and names through the same decoding tables that
/// `packets` shows them with (no second list of "where the addresses are").
///
/// Only fields that can carry private data are reported: `.address`, `.secret(n)` and `.text(n)`
/// specs, and `.custom` readers (whose value tells what they read: an address, a secret, a name, a
/// list of AD structures). Ranges are absolute offsets, as `ByteReader` reports them.
public struct FieldSite: Sendable {
    public enum Kind: Sendable, Equatable {
        /// A BD_ADDR (`.address`, or a `.custom` reader that returned an address).
        case address
        /// Key material (`.secret(n)`, or a `.custom` reader that returned a secret).
        case secret
        /// NUL-padded text of a fixed size (`.text(n)`: Local Name, Remote Name).
        case text
        /// Any other `.custom` reader: the value says what it was (a name read by `utf8Rest` is `.text`).
        case custom
    }

    /// The parameter name, as the table row spells it ("Peer Address", "Link Key", "Name"): display only.
    public let name: StaticString
    /// What the field is (`FieldID.deviceName` for a name read by a `.custom` reader); match this, not `name`.
    public let id: FieldID
    public let kind: Kind
    /// The bytes the field was read from. For a field cut short by the end of the data, the bytes
    /// that were there (`complete` is then false and `value` is nil).
    public let range: ByteRange
    public let value: FieldValue?
    public let complete: Bool

    public init(id: FieldID = .unspecified, name: StaticString, kind: Kind, range: ByteRange, value: FieldValue?, complete: Bool = true) {
        (self.id, self.name, self.kind, self.range, self.value, self.complete) = (id, name, kind, range, value, complete)
    }
}

/// Receives a `FieldSite` for each sensitive field `FieldDecoder` reads while it is installed.
/// Install with `visitor.during { … decode … }`; decoding without a visitor is unchanged (one
/// task-local read per `FieldDecoder.decode` call).
///
/// ```swift
/// var sites: [FieldSite] = []
/// let visitor = FieldVisitor { sites.append($0) }
/// visitor.during { _ = HCIDecoder.decode(.event, &r) }
/// ```
public final class FieldVisitor: @unchecked Sendable {   // safe: used only by the thread that installed it (task-local)
    @TaskLocal public static var current: FieldVisitor?

    private let report: (FieldSite) -> Void

    public init(_ report: @escaping (FieldSite) -> Void) { self.report = report }

    /// Runs `body` with this visitor installed for the current task/thread.
    public func during<R>(_ body: () throws -> R) rethrows -> R {
        try Self.$current.withValue(self, operation: body)
    }

    func visit(_ site: FieldSite) { report(site) }

    /// The site kind of a spec, or nil when the spec never holds private data itself (nested
    /// structures report their own fields).
    static func kind(of spec: FieldSpec) -> FieldSite.Kind? {
        switch spec {
        case .address: .address
        case .secret: .secret
        case .text: .text
        case .custom: .custom
        default: nil
        }
    }

    /// Fixed size of a sensitive spec, for reporting what is left of a field cut short.
    static func fixedSize(of spec: FieldSpec) -> Int? {
        switch spec {
        case .address: 6
        case let .secret(n), let .text(n): n
        default: nil
        }
    }

    /// Decodes one parameter and reports it when it is sensitive. On error the bytes that were
    /// present for a fixed-size address, key or text are still reported (`complete: false`), so a
    /// key cut by the end of a packet is still found.
    func value(_ p: Param, _ r: inout ByteReader) throws(DecodeError) -> FieldValue {
        guard let kind = Self.kind(of: p.spec) else { return try FieldDecoder.value(p.spec, &r) }
        let start = r.absoluteOffset
        let v: FieldValue
        do {
            v = try FieldDecoder.value(p.spec, &r)
        } catch {
            if let n = Self.fixedSize(of: p.spec) {
                let present = min(n, r.remaining)
                if present > 0 {
                    visit(FieldSite(id: p.id, name: p.name, kind: kind, range: ByteRange(offset: start, count: present), value: nil, complete: false))
                }
            }
            throw error
        }
        var reported = kind
        if kind == .custom {
            if case .address = v { reported = .address }
            if case .secret = v { reported = .secret }
        }
        visit(FieldSite(id: p.id, name: p.name, kind: reported, range: ByteRange(offset: start, count: r.absoluteOffset &- start), value: v))   // safe: the reader only advances
        return v
    }
}
