import BLEBytes
import BLECapture
import BLEProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Advertisers seen in advertising reports: one entry per (address, type), with what their data
/// says and how often and how strongly they were heard. Bounded per advertiser.
public struct Advertisers: Sendable {
    public struct Key: Hashable, Sendable {
        public var address: BDAddr
        public var type: UInt8
    }

    public struct Advertiser: Sendable {
        public var address: BDAddr
        public var addressType: LEAddressType
        public var reports = 0
        public var scanResponses = 0
        public var firstTime: Int64 = 0
        public var lastTime: Int64 = 0
        public var firstFrame = 0
        public var connectable = false
        public var extended = false
        public var names: [String] = []
        public var services: [BluetoothUUID] = []
        public var companies: [UInt16] = []
        public var txPower: Int8?
        public var appearance: UInt16?
        public var maxDataLength = 0
        public var malformed: [String] = []
        /// RSSI histogram (index = rssi + 128) for min/median/max without keeping every value.
        var rssiCounts = [UInt32](repeating: 0, count: 256)
        /// Gaps between consecutive advertising (not scan response) reports, first few only.
        var gaps: [Int64] = []
        var lastAdvTime: Int64?
        /// `txPower` came from a Tx Power Level AD structure.
        var txPowerFromData = false
        /// The last advertising and scan response data, and the problem found in each.
        var lastData: [[UInt8]] = [[], []]
        /// The problem found in each, and where (bytes from the start of the data): a report that
        /// repeats the data is given its own offset, not the first report's.
        var lastProblem: [AdvertisingProblem?] = [nil, nil]

        public var rssiMin: Int? { rssiCounts.firstIndex { $0 > 0 }.map { $0 - 128 } }
        public var rssiMax: Int? { rssiCounts.lastIndex { $0 > 0 }.map { $0 - 128 } }
        public var rssiMedian: Int? {
            let total = rssiCounts.reduce(0) { $0 + Int($1) }
            guard total > 0 else { return nil }
            var seen = 0
            for (i, n) in rssiCounts.enumerated() {
                seen += Int(n)
                if seen * 2 >= total { return i - 128 }
            }
            return nil
        }
        /// Median gap between advertising reports (µs): an estimate of the advertising interval as heard.
        public var intervalEstimate: Int64? {
            guard !gaps.isEmpty else { return nil }
            return gaps.sorted()[gaps.count / 2]
        }
    }

    /// Advertisers in order of appearance; `index` finds one by key. Updated in place (an
    /// advertiser's RSSI histogram must not be copied per report).
    public private(set) var list: [Advertiser] = []
    private var index: [Key: Int] = [:]
    /// The advertiser of the last report: scans repeat the same few addresses.
    private var lastKey: Key?
    private var lastIndex = 0
    public private(set) var totalReports = 0
    static let maxAdvertisers = 20_000
    static let maxKept = 8

    public init() {}

    public var all: [Advertiser] { list }

    /// The name an address advertised (any address type), if it advertised one. Called per
    /// connection, not per frame.
    public func name(of address: BDAddr) -> String? {
        for type in UInt8(0)...3 {
            if let i = index[Key(address: address, type: type)], let n = list[i].names.last { return n }
        }
        return nil
    }

    /// A malformed advertising data problem, `at` bytes into the data.
    public struct AdvertisingProblem: Sendable {
        public var text: String
        public var at: Int
    }

    /// Adds a report; returns a problem (with its absolute file offset) when its advertising data is malformed.
    @discardableResult
    mutating func add(_ report: AdvertisingReport, frame: Frame) -> (text: String, offset: Int)? {
        totalReports += 1
        // A report whose Address_Type is reserved is corrupt: its "address" is bytes of something else,
        // not an advertiser. Counted, never listed.
        guard Self.plausible(report) else { corruptReports += 1; return nil }
        let key = Key(address: report.address, type: report.addressType.rawValue)
        let i: Int
        if key == lastKey {
            i = lastIndex
        } else if let found = index[key] {
            i = found
        } else {
            guard list.count < Self.maxAdvertisers else { return nil }
            var a = Advertiser(address: report.address, addressType: report.addressType)
            a.firstTime = frame.timestamp
            a.firstFrame = frame.number
            list.append(a)
            i = list.count - 1
            index[key] = i
        }
        lastKey = key
        lastIndex = i
        return Self.update(&list[i], report, frame: frame)
    }

    /// Reports that named no real advertiser (a reserved Address_Type).
    public private(set) var corruptReports = 0

    /// Address_Type within its defined values: 0x00–0x03 in legacy reports (Core v5.4 Vol 4 Part E
    /// 7.7.65.2), and 0xFF (anonymous) too in extended reports (7.7.65.13). The Event_Type is not
    /// judged: Apple's controllers set its reserved high bits in extended reports.
    static func plausible(_ r: AdvertisingReport) -> Bool {
        let type = r.addressType.rawValue
        return type <= 3 || (r.extended && type == 0xFF)
    }

    private static func update(_ a: inout Advertiser, _ report: AdvertisingReport, frame: Frame) -> (text: String, offset: Int)? {
        a.reports += 1
        a.lastTime = frame.timestamp
        if report.isScanResponse { a.scanResponses += 1 } else {
            if let last = a.lastAdvTime, a.gaps.count < 64, frame.timestamp > last { a.gaps.append(frame.timestamp - last) }
            a.lastAdvTime = frame.timestamp
        }
        if report.isConnectable { a.connectable = true }
        if report.extended && !report.isLegacyPDU { a.extended = true }
        let rssi = Int(report.rssi)
        if rssi != 127 { a.rssiCounts[rssi + 128] &+= 1 }   // 127: RSSI not available
        // The AD Tx Power Level the advertiser states wins over the report's own TX power field.
        if report.txPower != nil, !a.txPowerFromData { a.txPower = report.txPower }
        a.maxDataLength = max(a.maxDataLength, report.data.count)
        // Legacy advertising PDUs carry at most 31 bytes (Core v5.4 Vol 6 Part B 2.3.1).
        var problem: (text: String, offset: Int)? = report.isLegacyPDU && report.data.count > 31
            ? ("legacy advertising data of \(report.data.count) bytes exceeds 31", report.data.offset) : nil
        let start = report.data.offset - frame.payloadOffset
        if start >= 0, start + report.data.count <= frame.payload.count {
            let bytes = UnsafeRawBufferPointer(rebasing: frame.payload[start ..< start + report.data.count])
            // Advertisers repeat the same data: parse it only when it changed (per PDU type).
            let slot = report.isScanResponse ? 1 : 0
            if !Self.same(a.lastData[slot], bytes), !Self.sameToAbsorb(a.lastData[slot], bytes) {
                a.lastData[slot].removeAll(keepingCapacity: true)
                a.lastData[slot].append(contentsOf: bytes)
                a.lastProblem[slot] = absorb(ByteReader(bytes, base: report.data.offset), into: &a)
            }
            if problem == nil, let p = a.lastProblem[slot] {
                problem = (p.text + " (at offset \(report.data.offset + p.at))", report.data.offset + p.at)
            }
        }
        return problem
    }

    /// Fewest data bytes an AD type needs (Core Supplement Part A 1), and the UUID width of lists.
    static func minimumLength(_ type: UInt8) -> Int {
        switch type {
        case 0x01, 0x0A, 0x1C: 1
        case 0x19, 0xFF, 0x16: 2
        case 0x20: 4
        case 0x21: 16
        case 0x12: 4
        case 0x1B: 7
        default: 0
        }
    }

    /// A device name's bytes without their padding: firmwares send fixed-size fields filled with NULs,
    /// 0xFF (erased flash) or spaces. The name ends at the first NUL or 0xFF (neither is in UTF-8
    /// text); surrounding spaces go. Empty when nothing is left.
    static func nameBytes(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var name = bytes[..<(bytes.firstIndex { $0 == 0 || $0 == 0xFF } ?? bytes.count)]
        while name.last == 0x20 { name = name.dropLast() }
        while name.first == 0x20 { name = name.dropFirst() }
        return UnsafeRawBufferPointer(rebasing: name)
    }

    /// A device name for display, padding removed (`nameBytes`); nil when nothing is left.
    public static func displayName<C: Collection>(_ bytes: C) -> String? where C.Element == UInt8 {
        let array = Array(bytes)
        return array.withUnsafeBytes { b in
            let name = nameBytes(b)
            return name.isEmpty ? nil : String(decoding: name, as: UTF8.self)
        }
    }

    /// `name`'s UTF-8 bytes equal `bytes` (a byte compare; the generic `elementsEqual` was the
    /// slowest part of a report).
    static func same(_ name: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var name = name
        return name.withUTF8 { n in
            n.count == bytes.count && (n.isEmpty || memcmp(n.baseAddress!, bytes.baseAddress!, n.count) == 0)   // safe: both non-empty
        }
    }

    /// The kept data equals `bytes` (a byte compare: the generic `elementsEqual` cost ~500
    /// instructions per report).
    static func same(_ kept: [UInt8], _ bytes: UnsafeRawBufferPointer) -> Bool {
        kept.withUnsafeBytes { k in
            k.count == bytes.count && (k.isEmpty || memcmp(k.baseAddress!, bytes.baseAddress!, k.count) == 0)   // safe: both non-empty
        }
    }

    /// `bytes` tells `absorb` nothing the kept data did not: the same AD structures (Length and
    /// AD Type) at the same places with the same bytes, but for the opaque part of Manufacturer
    /// Specific Data after its Company Identifier, which `absorb` does not read. Advertisers put
    /// counters and sensor readings there, so most reports differ only in it; absorbing them again
    /// would change nothing (names, services and companies are kept once, and the problem depends
    /// only on the layout), and parsing them was ~1,000 instructions per report. The kept data
    /// stays as it was, and later reports are compared with it.
    static func sameToAbsorb(_ kept: [UInt8], _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard kept.count == bytes.count else { return false }
        return kept.withUnsafeBytes { k in
            let count = k.count
            /// Bytes `from ..< to` are equal.
            func equal(_ from: Int, _ to: Int) -> Bool {
                to <= from || memcmp(k.baseAddress! + from, bytes.baseAddress! + from, to - from) == 0   // safe: from < to <= count, both non-empty
            }
            var i = 0
            while i < count {
                guard k[i] == bytes[i] else { return false }
                let length = Int(k[i])
                let end = i + 1 + length
                // A zero Length, or a structure running past the data: what follows is compared whole.
                guard length > 0, end <= count else { return equal(i + 1, count) }
                let opaqueFrom = k[i + 1] == 0xFF ? min(end, i + 4) : end   // Length, AD Type, Company Identifier
                guard equal(i + 1, opaqueFrom) else { return false }
                i = end
            }
            return true
        }
    }

    /// The UUID width of the (In)complete List of 16/32/128-bit Service UUIDs AD types.
    static func uuidListWidth(_ type: UInt8) -> Int? {
        switch type {
        case 0x02, 0x03: 2
        case 0x04, 0x05: 4
        case 0x06, 0x07: 16
        default: nil
        }
    }

    /// Takes names, services, companies and appearance out of the AD structures (Core Supplement Part A);
    /// returns the first problem (a structure running past the data, or too short for its type).
    static func absorb(_ data: ByteReader, into a: inout Advertiser) -> AdvertisingProblem? {
        var it = AD.StructureIterator(data)
        var problem: AdvertisingProblem? = nil
        while let s = it.next() {
            var d = s.data
            let width = uuidListWidth(s.type.rawValue)
            if d.remaining < minimumLength(s.type.rawValue) || width.map({ d.remaining % $0 != 0 }) == true {
                problem = problem ?? AdvertisingProblem(text: "\(s.type.name) of \(d.remaining) bytes is malformed",
                                                        at: d.absoluteOffset - data.absoluteOffset)
                continue
            }
            switch s.type.rawValue {
            case 0x08, 0x09:
                // Compare bytes first: a String is made only for a name not seen before.
                let bytes = Self.nameBytes(d.remainingBytes)
                if !bytes.isEmpty, a.names.count < maxKept, !a.names.contains(where: { Self.same($0, bytes) }) {
                    a.names.append(String(decoding: bytes, as: UTF8.self))
                }
            case 0x02, 0x03, 0x04, 0x05, 0x06, 0x07:
                let width = width ?? 2
                while d.remaining >= width, let u = try? d.uuid(width: width) {
                    if !a.services.contains(u), a.services.count < 32 { a.services.append(u) }
                }
            case 0x16, 0x20, 0x21:
                let width = s.type.rawValue == 0x16 ? 2 : s.type.rawValue == 0x20 ? 4 : 16
                if let u = try? d.uuid(width: width), !a.services.contains(u), a.services.count < 32 { a.services.append(u) }
            case 0x0A:
                if let t = try? d.u8("TX Power") { a.txPower = Int8(bitPattern: t); a.txPowerFromData = true }
            case 0x19:
                a.appearance = try? d.u16le("Appearance")
            case 0xFF:
                if let company = try? d.u16le("Company"), !a.companies.contains(company), a.companies.count < maxKept {
                    a.companies.append(company)
                }
            default:
                break
            }
        }
        if problem == nil, let text = it.problem { problem = AdvertisingProblem(text: text, at: it.rest.absoluteOffset - data.absoluteOffset) }
        if let problem, a.malformed.count < maxKept, !a.malformed.contains(problem.text) { a.malformed.append(problem.text) }
        return problem
    }
}
