import BLEBytes
import BLEProtocol

/// Consistent fake Bluetooth addresses: the same address gets the same fake everywhere in a file,
/// and the fake keeps the address's two most significant bits, so an LE random address keeps its
/// subtype (Core v5.4 Vol 6 Part B 1.3.2): static random (0b11) stays static, a resolvable private
/// address (0b01) stays resolvable, a non-resolvable one (0b00) stays non-resolvable. The random
/// part of a fake is never all zeros or all ones (1.3.2.1–1.3.2.2), and distinct addresses get
/// distinct fakes. 00:00:00:00:00:00 and FF:FF:FF:FF:FF:FF ("none", "any") are kept.
final class AddressMap {
    private var fakes: [UInt64: UInt64] = [:]
    private var next: UInt64 = 1
    /// Distinct addresses replaced so far.
    var count: Int { fakes.count }

    /// A 22-bit filler between the kept bits and the counter: `0101…`, never all zeros or ones.
    static let filler: UInt64 = 0x15_5555

    func fake(_ real: UInt64) -> UInt64 {
        let real = real & 0xFFFF_FFFF_FFFF
        if real == 0 || real == 0xFFFF_FFFF_FFFF { return real }
        if let f = fakes[real] { return f }
        let top = real & (0b11 << 46)
        let counter = next & 0xFF_FFFF
        let filler = (Self.filler ^ (next >> 24)) & 0x3F_FFFF
        let f = top | filler << 24 | counter
        next &+= 1   // safe: 2^64 distinct addresses cannot occur
        fakes[real] = f
        lowBits[Int(real & 0xFFFF)] = true
        return f
    }

    /// A cheap pre-filter on the low 16 bits before the dictionary (the sweep asks at every byte).
    private var lowBits = [Bool](repeating: false, count: 1 << 16)

    /// True when `real` was replaced somewhere (a table field said it is an address).
    @inline(__always)
    func isKnown(_ real: UInt64) -> Bool {
        lowBits[Int(real & 0xFFFF)] && fakes[real] != nil
    }

    /// The fake of a 6-byte little-endian address, as 6 bytes.
    func fake(bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var v: UInt64 = 0
        for (i, b) in bytes.prefix(6).enumerated() { v |= UInt64(b) << UInt64(8 * i) }
        let f = fake(v)
        return (0..<6).map { UInt8(truncatingIfNeeded: f >> UInt64(8 * $0)) }
    }
}

/// Consistent fake device names: the same name gets the same fake (`Device-1`, `Device-2`…), cut
/// or padded to the field's length so no length changes.
final class NameMap {
    private var fakes: [[UInt8]: Int] = [:]
    var count: Int { fakes.count }
    /// Every name replaced so far (its text), longest first, for the sweep through application data.
    var known: [[UInt8]] { fakes.keys.sorted { $0.count > $1.count } }

    /// The fake of a known name's text, of the same length (padded with `_`).
    func fake(text: [UInt8]) -> [UInt8] {
        text.withUnsafeBytes { fake($0, nulPadded: false) }
    }

    /// A replacement of exactly `length` bytes for `original` (its text up to the first NUL).
    /// - Parameter nulPadded: the field is a NUL-padded fixed-size buffer (HCI Local Name): the
    ///   fake is followed by NULs. Otherwise (AD names, GATT Device Name) it is padded with `_`.
    func fake(_ original: UnsafeRawBufferPointer, nulPadded: Bool) -> [UInt8] {
        let length = original.count
        let end = original.firstIndex(of: 0) ?? length
        let text = Array(original[..<end])
        if text.isEmpty { return nulPadded ? [UInt8](repeating: 0, count: length) : Array(original) }
        let k: Int
        if let existing = fakes[text] { k = existing } else { k = fakes.count + 1; fakes[text] = k }
        let width = nulPadded ? end : length
        var name: [UInt8] = []
        for candidate in ["Device-\(k)", "Dev\(k)", "D\(k)", "\(k)"] where candidate.utf8.count <= width {
            name = Array(candidate.utf8)
            break
        }
        if name.isEmpty { name = [UInt8](repeating: UInt8(ascii: "x"), count: width) }
        while name.count < width { name.append(UInt8(ascii: "_")) }
        return name + [UInt8](repeating: 0, count: length - name.count)
    }
}

/// Addresses written as text (`C0:11:22:33:44:02`, `c0-11-…`) in log lines kept with `--keep-names`.
enum AddressText {
    /// Offsets of `XX:XX:XX:XX:XX:XX` (or with `-`) with hex digits, not inside a longer hex run.
    static func find(_ bytes: UnsafeRawBufferPointer) -> [(offset: Int, value: UInt64)] {
        var out: [(Int, UInt64)] = []
        guard bytes.count >= 17 else { return out }
        var i = 0
        while i + 17 <= bytes.count {
            if let v = parse(bytes, i), (i == 0 || !isHexOrSeparator(bytes[i - 1])), (i + 17 == bytes.count || !isHexOrSeparator(bytes[i + 17])) {
                out.append((i, v))
                i += 17
            } else {
                i += 1
            }
        }
        return out
    }

    static func isHexOrSeparator(_ b: UInt8) -> Bool { hex(b) != nil || b == UInt8(ascii: ":") || b == UInt8(ascii: "-") }

    static func hex(_ b: UInt8) -> UInt64? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt64(b - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt64(b - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt64(b - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    static func parse(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt64? {
        let separator = b[at + 2]
        guard separator == UInt8(ascii: ":") || separator == UInt8(ascii: "-") else { return nil }
        var v: UInt64 = 0
        for k in 0..<6 {
            let o = at + 3 * k
            guard let h = hex(b[o]), let l = hex(b[o + 1]) else { return nil }
            if k < 5 && b[o + 2] != separator { return nil }
            v = v << 8 | h << 4 | l
        }
        return v
    }

    /// `value` as text in the style of `original` (separator and letter case kept).
    static func format(_ value: UInt64, like original: UnsafeRawBufferPointer) -> [UInt8] {
        let separator = original[2]
        let lower = original.contains { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "f") }
        let digits = Array((lower ? "0123456789abcdef" : "0123456789ABCDEF").utf8)
        var out: [UInt8] = []
        for k in 0..<6 {
            let byte = Int(value >> UInt64(40 - 8 * k) & 0xFF)
            out += [digits[byte >> 4], digits[byte & 0xF]]
            if k < 5 { out.append(separator) }
        }
        return out
    }
}

/// Log text replacement: `[redacted]` then spaces, keeping NULs and line ends where they were.
enum LogText {
    static let template = Array("[redacted]".utf8)

    static func redact(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var out = Array(bytes)
        var k = 0
        for i in out.indices where out[i] != 0 && out[i] != 0x0A && out[i] != 0x0D {
            out[i] = k < template.count ? template[k] : UInt8(ascii: " ")
            k += 1
        }
        return out
    }
}
