import BLEBytes

/// A Bluetooth device address (BD_ADDR), Core v5.4 Vol 2 Part B 1.2. On the wire it is 6 bytes,
/// least significant first; it is shown most significant first: `C0:FF:EE:00:00:01`.
public struct BDAddr: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 48-bit value (bits 47…0).
    public let value: UInt64

    @inlinable public init(_ value: UInt64) { self.value = value & 0xFFFF_FFFF_FFFF }

    /// Parses `"C0:FF:EE:00:00:01"` (also with `-`); nil when it is not 6 hex octets.
    public init?(string: String) {
        let parts = string.split(whereSeparator: { $0 == ":" || $0 == "-" })
        guard parts.count == 6 else { return nil }
        var v: UInt64 = 0
        for p in parts {
            guard p.count == 2, let b = UInt8(p, radix: 16) else { return nil }
            v = v << 8 | UInt64(b)
        }
        self.value = v
    }

    /// Written in one go into a 17-byte string (made per connection, finding and report line: six
    /// `Hex.pad` strings and five concatenations cost ~5,000 instructions).
    public var description: String {
        String(unsafeUninitializedCapacity: 17) { buffer in
            for octet in 0 ..< 6 {
                let byte = UInt8(truncatingIfNeeded: value >> UInt64(40 - 8 * octet))
                let hi = byte >> 4, lo = byte & 0xF
                buffer[octet * 3] = hi < 10 ? 0x30 &+ hi : 0x37 &+ hi   // "0"… or "A"…
                buffer[octet * 3 + 1] = lo < 10 ? 0x30 &+ lo : 0x37 &+ lo
                if octet < 5 { buffer[octet * 3 + 2] = UInt8(ascii: ":") }
            }
            return 17
        }
    }

    /// The two most significant bits, which classify a random address (Core v5.4 Vol 6 Part B 1.3.2).
    public var randomSubtype: RandomAddressSubtype {
        switch value >> 46 {
        case 0b11: .staticRandom
        case 0b01: .resolvablePrivate
        case 0b00: .nonResolvablePrivate
        default: .reserved
        }
    }

    public static func < (a: BDAddr, b: BDAddr) -> Bool { a.value < b.value }
}

/// Addresses written as text in a log line, a finding's sentence or a record kept by redaction:
/// `C0:11:22:33:44:02` or `c0-11-22-33-44-02`, one separator throughout, not inside a longer run
/// of hex digits and separators (a UUID, a hex dump). The one finder the syslog correlation, the
/// `--peer` scope and redaction share.
public enum AddressInText {
    /// Each address with the offset of its first character, in order.
    public static func find(_ text: UnsafeRawBufferPointer) -> [(offset: Int, address: BDAddr)] {
        var out: [(Int, BDAddr)] = []
        var i = 0
        while i + 17 <= text.count {
            if let value = parse(text, i), i == 0 || !continuesRun(text[i - 1]), i + 17 == text.count || !continuesRun(text[i + 17]) {
                out.append((i, BDAddr(value)))
                i += 17
            } else {
                i += 1
            }
        }
        return out
    }

    /// The addresses in `text`, in order.
    public static func addresses(in text: String) -> [BDAddr] {
        var text = text
        return text.withUTF8 { find(UnsafeRawBufferPointer($0)).map(\.address) }
    }

    /// The addresses in `bytes`, in order.
    public static func addresses(in bytes: [UInt8]) -> [BDAddr] {
        bytes.withUnsafeBytes { find($0).map(\.address) }
    }

    private static func continuesRun(_ c: UInt8) -> Bool { Hex.digit(c) != nil || c == UInt8(ascii: ":") || c == UInt8(ascii: "-") }

    /// Six hex octets at `at` with the separator of the first throughout.
    private static func parse(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt64? {
        let separator = b[at + 2]
        guard separator == UInt8(ascii: ":") || separator == UInt8(ascii: "-") else { return nil }
        var v: UInt64 = 0
        for k in 0 ..< 6 {
            let o = at + 3 * k
            guard let h = Hex.digit(b[o]), let l = Hex.digit(b[o + 1]) else { return nil }
            if k < 5 && b[o + 2] != separator { return nil }
            v = v << 8 | UInt64(h) << 4 | UInt64(l)
        }
        return v
    }
}

/// The kind of a random device address, from its two most significant bits.
public enum RandomAddressSubtype: String, Sendable {
    case staticRandom = "static"
    case resolvablePrivate = "resolvable private"
    case nonResolvablePrivate = "non-resolvable private"
    case reserved = "reserved"
}

/// LE address type as HCI carries it (Core v5.4 Vol 4 Part E 7.8.12 and 7.7.65.10).
public struct LEAddressType: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let publicDevice = LEAddressType(rawValue: 0)
    public static let randomDevice = LEAddressType(rawValue: 1)
    public static let publicIdentity = LEAddressType(rawValue: 2)
    public static let randomIdentity = LEAddressType(rawValue: 3)
    public static let anonymous = LEAddressType(rawValue: 0xFF)

    public var isRandom: Bool { rawValue == 1 || rawValue == 3 }

    public var name: String {
        switch rawValue {
        case 0: "Public"
        case 1: "Random"
        case 2: "Public Identity"
        case 3: "Random Identity"
        case 0xFF: "Anonymous"
        default: "Reserved (0x\(Hex.pad(rawValue, 2)))"
        }
    }

    /// `Random (static)`, `Random (resolvable private)`… for a given address.
    public func describe(_ address: BDAddr) -> String {
        isRandom ? "\(name) (\(address.randomSubtype.rawValue))" : name
    }
}

extension ByteReader {
    /// Reads a 6-byte BD_ADDR (little-endian on the wire).
    @inlinable
    public mutating func address(_ field: StaticString) throws(DecodeError) -> BDAddr {
        let lo = UInt64(try u32le(field))
        let hi = UInt64(try u16le(field))
        return BDAddr(hi << 32 | lo)
    }
}
