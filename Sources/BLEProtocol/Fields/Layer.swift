import BLEBytes

/// One protocol layer of a decoded frame, for display and JSON: `HCI Event: Disconnect Complete
/// (0x05) plen 4` and its fields. A frame decodes to a stack of layers (ACL → L2CAP → ATT).
public struct Layer: Sendable {
    /// The protocol: "HCI Command", "HCI Event", "ACL Data", "L2CAP", "ATT", "SMP"…
    public var protocolName: StaticString
    /// The message name from the decoding table, or "Unknown".
    public var name: String
    /// The code as shown after the name: `0x05`, `0x08|0x000b`.
    public var code: String
    /// Parameter length as declared by the header (plen, dlen), when the layer has one.
    public var length: Int?
    public var fields: [Field]
    /// Why decoding stopped, when it did; `fields` then hold what was read before.
    public var error: DecodeError?
    /// Warnings that do not make the layer malformed (trailing bytes, capture truncation).
    public var notes: [String]
    /// The whole layer as one line of text, for records btmon prints on one line (`bluetoothd:
    /// Terminating`, `MGMT Open: bluetoothd (privileged) version 1.22`): the packet text shows it
    /// instead of the title and fields; JSON keeps the fields.
    public var line: String?

    public init(protocolName: StaticString, name: String, code: String, length: Int? = nil,
                fields: [Field] = [], error: DecodeError? = nil, notes: [String] = [], line: String? = nil) {
        self.protocolName = protocolName
        self.line = line
        self.name = name
        self.code = code
        self.length = length
        self.fields = fields
        self.error = error
        self.notes = notes
    }
}

/// A row shape shared by the HCI command, event and LE subevent tables.
public struct MessageEntry: Sendable {
    public let code: UInt16
    public let name: StaticString
    /// `name` as a String, made once (copied into a layer per packet; long names would allocate).
    public let nameText: String
    public let parameters: [Param]
    /// Command Complete return parameters (commands only).
    public let returns: [Param]?
    /// Size rule of `parameters`, derived once.
    public let size: SizeRule
    /// Size rule of `returns`, derived once.
    public let returnsSize: SizeRule?

    public init(_ code: UInt16, _ name: StaticString, _ parameters: [Param] = [], returns: [Param]? = nil) {
        (self.code, self.name, self.parameters, self.returns) = (code, name, parameters, returns)
        nameText = name.description
        size = SizeRule(parameters)
        returnsSize = returns.map(SizeRule.init)
    }
}

/// An index over a table by code, built once; a duplicate row is a programming error caught by tests.
public struct MessageTable: Sendable {
    public let entries: [MessageEntry]
    /// Row of each code (dense, -1: none): a lookup per packet is an array load, not a hash.
    /// Codes are 16-bit at most, so the slots are bounded (128 KiB for the command table).
    private let slots: [Int16]
    /// The size rules by row, copied out so validation reads no reference-counted row.
    private let sizes: [SizeRule]
    private let returnsSizes: [SizeRule?]

    public init(_ entries: [MessageEntry]) {
        self.entries = entries
        var slots = [Int16](repeating: -1, count: Int(entries.map(\.code).max() ?? 0) + 1)
        for (i, e) in entries.enumerated() where slots[Int(e.code)] < 0 { slots[Int(e.code)] = Int16(i) }
        self.slots = slots
        sizes = entries.map(\.size)
        returnsSizes = entries.map(\.returnsSize)
    }

    @inline(__always)
    private func row(_ code: UInt16) -> Int? {
        let c = Int(code)
        guard c < slots.count else { return nil }
        let i = Int(slots[c])
        return i < 0 ? nil : i
    }

    public subscript(code: UInt16) -> MessageEntry? {
        row(code).map { entries[$0] }
    }

    /// The size rule of a code's parameters (`nil`: unknown code).
    public func size(of code: UInt16) -> SizeRule? { row(code).map { sizes[$0] } }

    /// The size rule of a command's return parameters (`nil`: unknown or none).
    public func returnsSize(of code: UInt16) -> SizeRule? { row(code).flatMap { returnsSizes[$0] } }

    /// Codes that appear in more than one row (should be empty; checked by a test).
    public var duplicateCodes: [UInt16] {
        var seen = Set<UInt16>(), dups: [UInt16] = []
        for e in entries where !seen.insert(e.code).inserted { dups.append(e.code) }
        return dups
    }
}

extension FieldDecoder {
    /// Decodes a message's parameters and turns leftovers into a note (a warning, not malformed).
    public static func decodeMessage(_ params: [Param], _ r: inout ByteReader) -> (fields: [Field], error: DecodeError?, notes: [String]) {
        let (fields, error) = decodeAll(params, &r)
        var notes: [String] = []
        if error == nil, r.remaining > 0 {
            notes.append("\(r.remaining) trailing byte\(r.remaining == 1 ? "" : "s"): \(Hex.string(r.remainingBytes))")
        }
        return (fields, error, notes)
    }
}
