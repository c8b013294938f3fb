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

/// Addresses written as text in log lines kept with `--keep-names` (found by `AddressInText`),
/// written again with a replacement value.
enum AddressText {
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

/// Replacements for ATT values (`--drop-values`): the n-th distinct value of a length becomes n as
/// a big-endian number of that length (`00 00`, `00 01`, …). Equal values stay equal and different
/// ones stay different, so whatever compares values still sees the same thing: the air adapter
/// takes a PDU with the same SN and the same bytes as the last one for a retransmission (Core v5.4
/// Vol 6 Part B 4.5.9), and zeros everywhere would make two different writes look alike. Only the
/// order in which distinct values first appear is left. At most `maxKept` values are remembered
/// (bounded memory); after that a repeated value may get a new number.
final class ValueMap {
    static let maxKept = 200_000
    private var fakes: [[UInt8]: [UInt8]] = [:]
    private var counters: [Int: UInt64] = [:]

    func fake(_ value: [UInt8]) -> [UInt8] {
        if let f = fakes[value] { return f }
        let n = counters[value.count, default: 0]
        counters[value.count] = n &+ 1   // safe: a count of values
        var out = [UInt8](repeating: 0, count: value.count)
        for k in 0 ..< min(8, value.count) { out[value.count - 1 - k] = UInt8(truncatingIfNeeded: n >> UInt64(8 * k)) }
        if fakes.count < Self.maxKept { fakes[value] = out }
        return out
    }
}

/// Consistent fake access addresses for the connections of an air capture. A fake obeys the rules
/// of Core v5.4 Vol 6 Part B 2.1.2 for a random access address (checked by `isValid`), so a
/// decoder that checks them accepts the copy. The advertising access address is kept.
final class AccessAddressMap {
    private var fakes: [UInt32: UInt32] = [:]
    private var used = Set<UInt32>()
    private var next: UInt32 = 1
    var count: Int { fakes.count }

    func fake(_ real: UInt32) -> UInt32 {
        if real == LinkLayer.advertisingAccessAddress { return real }
        if let f = fakes[real] { return f }
        var candidate = real
        while candidate == real || used.contains(candidate) || !Self.isValid(candidate) {
            candidate = Mix.u32(next)
            next &+= 1   // safe: a counter
        }
        fakes[real] = candidate
        used.insert(candidate)
        return candidate
    }

    /// The fake of an access address already replaced somewhere, else nil.
    func knownFake(_ real: UInt32) -> UInt32? { fakes[real] }

    /// The access address rules of Vol 6 Part B 2.1.2 (the ones about its bit pattern).
    static func isValid(_ aa: UInt32) -> Bool {
        let advertising = LinkLayer.advertisingAccessAddress
        if aa == advertising || (aa ^ advertising).nonzeroBitCount == 1 { return false }
        let b = [aa & 0xFF, aa >> 8 & 0xFF, aa >> 16 & 0xFF, aa >> 24]
        if b.allSatisfy({ $0 == b[0] }) { return false }
        // No more than six consecutive zeros or ones; no more than 24 transitions; at least two
        // transitions in the most significant six bits.
        var run = 1, transitions = 0, topTransitions = 0
        for i in 1..<32 {
            let same = (aa >> UInt32(i)) & 1 == (aa >> UInt32(i - 1)) & 1
            run = same ? run + 1 : 1
            if run > 6 { return false }
            if !same {
                transitions += 1
                if i >= 27 { topTransitions += 1 }
            }
        }
        return transitions <= 24 && topTransitions >= 2
    }
}

/// Consistent fake CRC initial values (24 bits, any value is valid: Vol 6 Part B 2.3.3.1).
final class CRCInitMap {
    private var fakes: [UInt32: UInt32] = [:]
    private var next: UInt32 = 0x51
    var count: Int { fakes.count }

    func fake(_ real: UInt32) -> UInt32 {
        let real = real & 0xFF_FFFF
        if let f = fakes[real] { return f }
        var candidate = real
        while candidate == real || candidate == 0 {
            candidate = Mix.u32(next) & 0xFF_FFFF
            next &+= 1   // safe: a counter
        }
        fakes[real] = candidate
        return candidate
    }
}

/// A 32-bit integer mixer (the finaliser of MurmurHash3): counters → scattered bit patterns.
enum Mix {
    static func u32(_ k: UInt32) -> UInt32 {
        var x = k &* 0x9E37_79B1   // safe: wrapping is the point
        x ^= x >> 16
        x = x &* 0x85EB_CA6B
        x ^= x >> 13
        x = x &* 0xC2B2_AE35
        return x ^ x >> 16
    }
}

/// The identifying parts of replaced names: a name such as `NOVA_O38240700268` carries a serial
/// number (`O38240700268`) that apps also write into their own data (a firmware string
/// `O38240700268V0130.0.5`). A token of a replaced name (letters and digits between separators)
/// of at least `minimumLength` characters with at least `minimumDigits` digits counts as an
/// identifier: it is replaced wherever application data holds it, by `ID000…1` of the same length.
/// Words without digits (`bleanalyze`, `Inspire`) are not identifiers: they name a product.
final class IdentifierMap {
    static let minimumLength = 6
    static let minimumDigits = 3
    private var fakes: [[UInt8]: [UInt8]] = [:]

    /// The identifiers in `names` (each name's text), longest first.
    static func identifiers(in names: [[UInt8]]) -> [[UInt8]] {
        var out = Set<[UInt8]>()
        for name in names {
            var token: [UInt8] = []
            for b in name + [0] {
                if Self.isAlphanumeric(b) { token.append(b); continue }
                if token.count >= minimumLength, token.filter({ $0 >= 0x30 && $0 <= 0x39 }).count >= minimumDigits { out.insert(token) }
                token.removeAll()
            }
        }
        return out.sorted { $0.count != $1.count ? $0.count > $1.count : $0.lexicographicallyPrecedes($1) }
    }

    static func isAlphanumeric(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
    }

    func fake(_ identifier: [UInt8]) -> [UInt8] {
        if let f = fakes[identifier] { return f }
        let digits = Array(String(fakes.count + 1).utf8)
        var f = Array("ID".utf8)
        while f.count + digits.count < identifier.count { f.append(UInt8(ascii: "0")) }
        f = Array((f + digits).suffix(identifier.count))
        fakes[identifier] = f
        return f
    }
}

/// Text in kept application data: runs of at least `minimumLength` printable ASCII characters
/// (0x20–0x7E, as `strings -n 6` finds them) that look like text, not like binary that happens to
/// be printable: only letters, digits, space and `-_.:/@,+#()`, and at least 3 in 4 letters or digits.
public enum PrintableRuns {
    public static let minimumLength = 6

    static func find(_ bytes: [UInt8]) -> [String] {
        var out: [String] = []
        var start: Int? = nil
        for i in 0...bytes.count {
            let printable = i < bytes.count && bytes[i] >= 0x20 && bytes[i] <= 0x7E
            if printable { if start == nil { start = i }; continue }
            if let s = start, i - s >= minimumLength, looksLikeText(bytes[s ..< i]) {
                out.append(String(decoding: bytes[s ..< i], as: UTF8.self))
            }
            start = nil
        }
        return out
    }

    static let punctuation = Set(" -_.:/@,+#()".utf8)

    static func looksLikeText(_ run: ArraySlice<UInt8>) -> Bool {
        var alphanumeric = 0
        for b in run {
            if IdentifierMap.isAlphanumeric(b) { alphanumeric += 1 } else if !punctuation.contains(b) { return false }
        }
        return alphanumeric * 4 >= run.count * 3
    }
}
