import BLEBytes

/// A Bluetooth UUID, Core v5.4 Vol 3 Part B 2.5.1: 16-, 32- or 128-bit on the wire, all of them
/// 128-bit values. 16- and 32-bit UUIDs are shorthand for values on the Bluetooth Base UUID
/// `00000000-0000-1000-8000-00805F9B34FB`.
///
/// Equality and hashing use the 128-bit value, so `0x180F` read from a 2-byte field equals the
/// same UUID read from a 16-byte field (PureSwift's `.bit16 != .bit128` bug). The wire width is kept
/// for display only.
public struct BluetoothUUID: Hashable, Sendable, CustomStringConvertible {
    /// The 128-bit value, most significant half (bytes 0…7 of the canonical big-endian form).
    public let high: UInt64
    /// The 128-bit value, least significant half (bytes 8…15).
    public let low: UInt64
    /// Bytes on the wire: 2, 4 or 16.
    public let width: UInt8

    /// `high` of the Base UUID (the `xxxxxxxx` part zero).
    public static let baseHigh: UInt64 = 0x0000_0000_0000_1000
    /// `low` of the Base UUID.
    public static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB

    /// A 128-bit UUID from its two halves (canonical big-endian order).
    @inlinable
    public init(high: UInt64, low: UInt64) {
        (self.high, self.low, self.width) = (high, low, 16)
    }

    /// A 16-bit SIG UUID (`0x2A37`).
    @inlinable
    public init(uuid16: UInt16) {
        (self.high, self.low, self.width) = (UInt64(uuid16) << 32 | Self.baseHigh, Self.baseLow, 2)
    }

    /// A 32-bit SIG UUID.
    @inlinable
    public init(uuid32: UInt32) {
        (self.high, self.low, self.width) = (UInt64(uuid32) << 32 | Self.baseHigh, Self.baseLow, 4)
    }

    /// From 16 bytes in canonical (big-endian) order; nil unless exactly 16 bytes.
    public init?<C: Collection>(bigEndianBytes bytes: C) where C.Element == UInt8 {
        guard bytes.count == 16 else { return nil }
        var h: UInt64 = 0, l: UInt64 = 0
        for (i, b) in bytes.enumerated() {
            if i < 8 { h = h << 8 | UInt64(b) } else { l = l << 8 | UInt64(b) }
        }
        self.init(high: h, low: l)
    }

    /// Parses `2A37`, `0x2A37`, `0000180d` (32-bit) or the canonical 8-4-4-4-12 form (any case).
    public init?(string: String) {
        var s = Substring(string)
        if s.hasPrefix("0x") || s.hasPrefix("0X") { s = s.dropFirst(2) }
        let hex = s.filter { $0 != "-" }
        guard hex.allSatisfy(\.isHexDigit) else { return nil }
        switch hex.count {
        case 4:
            guard let v = UInt16(hex, radix: 16) else { return nil }
            self.init(uuid16: v)
        case 8:
            guard let v = UInt32(hex, radix: 16) else { return nil }
            self.init(uuid32: v)
        case 32:
            guard let h = UInt64(hex.prefix(16), radix: 16), let l = UInt64(hex.suffix(16), radix: 16) else { return nil }
            self.init(high: h, low: l)
        default:
            return nil
        }
    }

    /// True when the value lies on the Base UUID (a 16- or 32-bit SIG UUID, whatever its wire width).
    @inlinable public var isOnBase: Bool { low == Self.baseLow && high & 0xFFFF_FFFF == Self.baseHigh }

    /// The 16-bit form when the UUID is on the Base UUID and fits 16 bits.
    @inlinable public var uuid16: UInt16? {
        guard isOnBase, high >> 48 == 0 else { return nil }
        return UInt16(truncatingIfNeeded: high >> 32)
    }

    /// The 32-bit form when the UUID is on the Base UUID.
    @inlinable public var uuid32: UInt32? {
        guard isOnBase else { return nil }
        return UInt32(truncatingIfNeeded: high >> 32)
    }

    /// The 16 bytes in canonical (big-endian) order.
    public var bigEndianBytes: [UInt8] {
        var out = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            out[i] = UInt8(truncatingIfNeeded: high >> UInt64(56 - 8 * i))
            out[8 + i] = UInt8(truncatingIfNeeded: low >> UInt64(56 - 8 * i))
        }
        return out
    }

    /// The SIG category of a 16-bit UUID (service, characteristic, descriptor…), from Assigned Numbers.
    public var category: AssignedNumbers.UUIDCategory? {
        uuid16.flatMap(AssignedNumbers.uuid16Category)
    }

    /// The SIG name (`Heart Rate Measurement`) or a well-known vendor name for a 128-bit UUID.
    public var name: String? {
        if let v = uuid16 { return AssignedNumbers.uuid16Name(v) }
        if isOnBase { return nil }   // 32-bit SIG values are not assigned names
        return AssignedNumbers.uuid128Name(bigEndianBytes)
    }

    /// `0x2A37` for a 16-bit wire UUID, `0x0000180D` for 32-bit, canonical lowercase 8-4-4-4-12 for 128-bit.
    public var description: String {
        switch width {
        case 2: return Hex.code(UInt16(truncatingIfNeeded: high >> 32), 4, uppercase: true)
        case 4: return Hex.code(UInt32(truncatingIfNeeded: high >> 32), 8, uppercase: true)
        default:
            // Written digit by digit: two padded strings cut into five Substrings cost ~9,000
            // instructions, and attribute names are made per connection.
            return String(unsafeUninitializedCapacity: 36) { buffer in
                var at = 0
                for digit in 0 ..< 32 {
                    if at == 8 || at == 13 || at == 18 || at == 23 { buffer[at] = UInt8(ascii: "-"); at += 1 }
                    let half = digit < 16 ? high : low
                    let d = UInt8(truncatingIfNeeded: half >> UInt64(60 - 4 * (digit & 15))) & 0xF
                    buffer[at] = d < 10 ? 0x30 &+ d : 0x57 &+ d   // "0"… or "a"…
                    at += 1
                }
                return at
            }
        }
    }

    /// `Heart Rate (0x180D)` when named, else the description alone.
    public var displayName: String {
        if let n = name { return "\(n) (\(description))" }
        return description
    }

    public static func == (a: Self, b: Self) -> Bool { a.high == b.high && a.low == b.low }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(high)
        hasher.combine(low)
    }

    // Well-known GATT declaration types, Core v5.4 Vol 3 Part G 3.
    public static let primaryService = BluetoothUUID(uuid16: 0x2800)
    public static let secondaryService = BluetoothUUID(uuid16: 0x2801)
    public static let include = BluetoothUUID(uuid16: 0x2802)
    public static let characteristic = BluetoothUUID(uuid16: 0x2803)
    public static let clientCharacteristicConfiguration = BluetoothUUID(uuid16: 0x2902)
}

extension ByteReader {
    /// Reads a UUID of `width` bytes (2, 4 or 16), little-endian on the wire (Core v5.4 Vol 3 Part F 3.2.1).
    /// - Throws: `.invalidValue(width)` for any other width; `.truncated` when the bytes are short.
    @inlinable
    public mutating func uuid(width: Int, _ field: StaticString = "UUID") throws(DecodeError) -> BluetoothUUID {
        switch width {
        case 2: return BluetoothUUID(uuid16: try u16le(field))
        case 4: return BluetoothUUID(uuid32: try u32le(field))
        case 16:
            let low = try u64le(field)   // the least significant half comes first on the wire
            let high = try u64le(field)
            return BluetoothUUID(high: high, low: low)
        default:
            throw DecodeError(kind: .invalidValue(UInt64(truncatingIfNeeded: width)), offset: absoluteOffset, field: field)
        }
    }
}
