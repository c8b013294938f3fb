import BLEBytes
import BLECapture
import BLEProtocol

/// One replacement inside one frame: `bytes` replace the frame's payload at `offset`.
struct RedactionEdit: Sendable {
    enum What: Sendable { case address, key, name, identifier, log, control, link, value }
    var offset: Int
    var bytes: [UInt8]
    var what: What
}

/// Finds what must be replaced in each frame, through the decoding tables: the analysis pass runs
/// as for `packets` (so L2CAP PDUs are reassembled and ATT values are typed by the rebuilt GATT
/// database), and every HCI packet, log record and L2CAP PDU is decoded for display with a
/// `FieldVisitor` installed, which reports where each address, key and name lies.
///
/// A PDU reassembled from several ACL fragments can put a key in an earlier frame than the one
/// that completes it: those edits are `deferred` (the redactor runs a first pass to collect them).
/// The reassembler's `FragmentMap` says which frame and file offset each byte of such a PDU has.
///
/// Air captures (LE Link Layer) go through the same pass: the analysis turns their data PDUs into
/// ACL fragments, so L2CAP, SMP and ATT are found the same way, and `airRecords` handles the Link
/// Layer itself (RedactionScanner+Air.swift).
final class RedactionScanner {
    let options: RedactionOptions
    let addresses: AddressMap
    let names: NameMap
    let analyzer = Analyzer()
    private let collectDeferred: Bool
    /// Edits for frames before the one being scanned (first pass only), by frame number; their
    /// `offset` is a file offset (the redactor makes it the frame's payload offset).
    private(set) var deferred: [Int: [RedactionEdit]] = [:]

    // The frame being scanned.
    var frame: Frame?
    var edits: [RedactionEdit] = []
    /// The LL packet of the air frame scanned last, as the analysis parsed it (each air frame is
    /// parsed once for the analysis, the edits and the copy's CRC); nil when it does not parse or
    /// the frame is not an air packet.
    private(set) var scannedAir: LLAirPacket?

    /// One direction of a link (for `valuePDU`).
    struct LinkDirection: Hashable { var adapter: UInt16; var handle: UInt16; var received: Bool }

    /// The second pass: also replace, in bytes no table decodes (vendor commands, ATT values), any
    /// address the tables found anywhere in the file (the map is complete after the first pass).
    let sweep: Bool

    /// Air captures: fake access addresses and CRC initial values, the CRCInit each connection's
    /// CONNECT_IND announced (by its real access address), and for the frame being scanned, the
    /// CRCInit change its CRC must follow (real XOR fake; 0 when unchanged or unknown).
    let accessAddresses: AccessAddressMap
    let crcInits: CRCInitMap
    /// `--drop-values` replacements (shared by both passes, like the other maps).
    let values: ValueMap
    var announcedCRCInit: [UInt32: UInt32] = [:]
    var crcInitDelta: UInt32 = 0

    /// Identifiers of replaced names, and their fakes (see `IdentifierMap`).
    let identifiers = IdentifierMap()
    private var substitutionsFor = -1
    private var cachedSubstitutions: [(from: [UInt8], to: [UInt8], what: RedactionEdit.What)] = []
    /// Indices into `cachedSubstitutions` (longest first) by first byte.
    private var byFirstByte: [[Int]] = Array(repeating: [], count: 256)

    /// Printable text left in kept ATT values (second pass), by text and handle.
    struct KeptKey: Hashable { var text: String; var handle: UInt16? }
    private(set) var kept: [KeptKey: KeptString] = [:]
    private(set) var keptOrder: [KeptKey] = []
    static let maxKeptStrings = 1_000
    /// ATT values left in the copy (app data), and replaced by `--drop-values`.
    private(set) var keptValues = 0
    private(set) var droppedValues = 0

    init(options: RedactionOptions, addresses: AddressMap = AddressMap(), names: NameMap = NameMap(),
         accessAddresses: AccessAddressMap = AccessAddressMap(), crcInits: CRCInitMap = CRCInitMap(), values: ValueMap = ValueMap(),
         collectDeferred: Bool, sweep: Bool = false) {
        self.values = values
        self.options = options
        self.addresses = addresses
        self.names = names
        self.accessAddresses = accessAddresses
        self.crcInits = crcInits
        self.collectDeferred = collectDeferred
        self.sweep = sweep
    }

    /// The edits for `frame` found while scanning it (deferred edits for it are separate).
    func scan(_ frame: Frame) -> [RedactionEdit] {
        self.frame = frame
        edits.removeAll(keepingCapacity: true)
        crcInitDelta = 0
        scannedAir = analyzer.consume(frame) { pdu in l2capPDU(pdu) }.airPacket
        if frame.problem == nil { records(frame) }
        if sweep { sweepAddresses(frame) }
        if sweep, frame.kind == .airLE { sweepCorruptAir(frame) }
        self.frame = nil
        return edits
    }

    // MARK: HCI packets and log records

    private func records(_ frame: Frame) {
        switch frame.kind {
        case .command, .event, .indexNew, .indexInfo:
            var sites: [FieldSite] = []
            let visitor = FieldVisitor { sites.append($0) }
            _ = visitor.during { FrameLayers.decode(frame) }
            let textAllowed = frame.kind.isHCI
            for site in sites { apply(site, inFrame: frame.payloadOffset, map: nil, textAllowed: textAllowed) }
        case .syslog:
            if !options.keepNames { syslog(frame) }
        case .userLogging:
            if !options.keepNames { userLogging(frame) }
        case .airLE:
            airRecords(frame)
        case .controlCommand, .controlEvent:
            // BlueZ mgmt traffic (btmon): keys (New Long Term Key, New Link Key, New IRK), addresses and
            // EIR names, not decoded by us; everything after cookie and opcode is zeroed.
            if frame.payload.count > 6 {
                add(RedactionEdit(offset: 6, bytes: [UInt8](repeating: 0, count: frame.payload.count - 6), what: .control))
            }
        default:
            break
        }
    }

    /// PacketLogger syslog (0xF7): u32 pid, u8 level, then NUL-terminated process, sender,
    /// subsystem, category and message. The first four strings are kept (they name the process and
    /// subsystem); the message and anything after it is replaced.
    private func syslog(_ frame: Frame) {
        let p = frame.payload
        guard let start = LogRecords.syslogMessageStart(p.reader) else { return }
        add(RedactionEdit(offset: start, bytes: LogText.redact(UnsafeRawBufferPointer(rebasing: p[start...])), what: .log))
    }

    /// Monitor User Logging (opcode 13): u8 priority, u8 ident length, ident, message.
    private func userLogging(_ frame: Frame) {
        let p = frame.payload
        guard let start = LogRecords.userLoggingMessageStart(p.reader) else { return }
        add(RedactionEdit(offset: start, bytes: LogText.redact(UnsafeRawBufferPointer(rebasing: p[start...])), what: .log))
    }

    // MARK: Known addresses anywhere

    /// Where the sweep may look in a frame: only bytes the analysis never reads, so replacing a
    /// 6-byte run that happens to equal an address cannot change a finding. That is the parameters of
    /// commands and events no table row decodes (vendor commands such as Android's multi-advertising
    /// set-address), their Command Complete return parameters, SCO/ISO data, and records that are not
    /// HCI packets (except New Index / Index Info, decoded through the tables). ACL data is never
    /// swept: an L2CAP header or an ATT handle must not be mistaken for an address.
    static func sweepStart(_ frame: Frame) -> Int? {
        let p = frame.payload
        if frame.problem != nil { return 0 }
        switch frame.kind {
        case .command:
            guard p.count >= HCIPacketHeader.commandHeaderSize, let opcode = HCIPacketHeader.commandOpcode(p.reader) else { return nil }
            return undecoded(opcode) ? HCIPacketHeader.commandHeaderSize : nil
        case .event:
            guard p.count >= HCIPacketHeader.eventHeaderSize, let code = HCIPacketHeader.eventCode(p.reader) else { return nil }
            switch code {
            case Self.vendorEvent:
                return HCIPacketHeader.eventHeaderSize
            case HCIEventCode.commandComplete:
                // Num packets, opcode and the status the analysis reads; then the return parameters.
                guard let opcode = HCIPacketHeader.answeredOpcode(p.reader) else { return nil }
                return undecoded(HCIOpcode(rawValue: opcode)) ? HCIPacketHeader.commandCompleteReturnParametersStart : nil
            case HCIEventCode.commandStatus:
                return nil
            case HCIEventCode.leMeta:
                guard let subevent = HCIPacketHeader.leSubevent(p.reader) else { return nil }
                return HCIDecoder.leMeta[UInt16(subevent)] == nil ? HCIPacketHeader.leMetaParametersStart : nil
            default:
                return HCIDecoder.events[UInt16(code)] == nil ? HCIPacketHeader.eventHeaderSize : nil
            }
        case .scoData: return HCIPacketHeader.scoHeaderSize
        case .isoData: return HCIPacketHeader.isoHeaderSize
        case .aclData, .indexNew, .indexInfo, .airLE: return nil
        default: return 0
        }
    }

    /// The vendor-specific event code (Core v5.4 Vol 4 Part E 5.4.4): its parameters are the vendor's.
    static let vendorEvent: UInt8 = 0xFF

    /// A command whose parameters the analysis never reads: vendor-specific (OGF 0x3F) or unknown to the tables.
    static func undecoded(_ opcode: HCIOpcode) -> Bool {
        opcode.isVendor || HCIDecoder.commands[opcode.rawValue] == nil
    }

    /// Where a frame carries application data the analysis reads only for lengths and structure:
    /// the advertising data of LE advertising reports (a manufacturer or service data structure may
    /// embed the advertiser's address: Xiaomi MiBeacon 0xFE95 does), and ATT values (an accessory may
    /// echo its address or name in app data), including the continuation fragments of a value PDU.
    /// Returns the payload offset the data starts at.
    private func dataStart(_ frame: Frame) -> Int? {
        let p = frame.payload
        switch frame.kind {
        case .event:
            // LE Advertising Report, Extended, Directed: after the subevent code.
            guard let subevent = HCIPacketHeader.leSubevent(p.reader), Self.advertisingReports.contains(subevent) else { return nil }
            return HCIPacketHeader.leMetaParametersStart
        case .aclData:
            guard let header = HCIPacketHeader.acl(p.reader) else { return nil }
            let key = LinkDirection(adapter: frame.adapter, handle: header.handle, received: frame.direction == .received)
            if !header.isStart { return valuePDU.contains(key) ? ACLHeader.size : nil }
            valuePDU.remove(key)
            // L2CAP basic header on the ATT channel, then the opcode: the value's offset.
            guard let start = Self.attValueStart(p.reader.getSlice(at: ACLHeader.size, count: p.count - ACLHeader.size)) else { return nil }
            valuePDU.insert(key)
            return ACLHeader.size + start
        case .airLE:
            return airDataStart(frame)
        default:
            return nil
        }
    }

    /// LE Advertising Report (0x02), Directed (0x0B), Extended (0x0D): their data is swept.
    static let advertisingReports: Set<UInt8> = [LESubevent.advertisingReport, LESubevent.directedAdvertisingReport, LESubevent.extendedAdvertisingReport]

    /// Where the value of an ATT PDU whose value runs to its end starts in `l2cap` (an L2CAP PDU,
    /// basic header first, at least the opcode present): nil on another channel or for another PDU.
    static func attValueStart(_ l2cap: ByteReader?) -> Int? {
        guard let l2cap, let opcode = L2CAP.attOpcode(l2cap), let start = ATT.valueStart(opcode) else { return nil }
        return L2CAP.basicHeaderLength + start
    }

    /// Links whose L2CAP PDU in progress is an ATT value PDU (its continuation fragments are value).
    var valuePDU = Set<LinkDirection>()

    /// Replaces every 6-byte run equal to an address the tables found (in the bytes `sweepStart`
    /// allows, in either byte order where application data is), addresses written as text in log
    /// records, and known names inside application data.
    private func sweepAddresses(_ frame: Frame) {
        let p = frame.payload
        if [.syslog, .userLogging, .systemNote, .note].contains(frame.kind) {
            for (offset, address) in AddressInText.find(p) where address.value != 0 && address.value != 0xFFFF_FFFF_FFFF {
                let text = UnsafeRawBufferPointer(rebasing: p[offset ..< offset + 17])
                add(RedactionEdit(offset: offset, bytes: AddressText.format(addresses.fake(address.value), like: text), what: .address), unlessOverlapping: true)
            }
        }
        let data = dataStart(frame)
        guard addresses.count > 0 || names.count > 0, p.count >= 4, let from = Self.sweepStart(frame) ?? data else { return }
        // Application data is swept for both byte orders and for names; undecoded HCI parameters for
        // little-endian addresses only (as the tables write them).
        let application = data != nil && Self.sweepStart(frame) == nil
        // An advertising report's framing stays (computed at the first hit: most frames have none).
        var framing: [Bool]?? = application && frame.kind == .event ? nil : .some(nil)
        var i = from
        let bytes = p.reader
        while addresses.count > 0, i + 6 <= p.count {
            guard let v = bytes.getU48le(at: i) else { break }
            let reversed = application ? Self.reversed48(v) : 0
            let fake: [UInt8]
            if addresses.isKnown(v), !overlapsEdit(i, 6) {
                fake = addresses.fake(bytes: UnsafeRawBufferPointer(rebasing: p[i ..< i + 6]))
            } else if application, addresses.isKnown(reversed), !overlapsEdit(i, 6) {
                let f = addresses.fake(reversed)
                fake = (0..<6).reversed().map { UInt8(truncatingIfNeeded: f >> UInt64(8 * $0)) }
            } else {
                i += 1
                continue
            }
            if framing == nil { framing = .some(AdvertisingFraming.protected(p)) }
            addAround(framing ?? nil, RedactionEdit(offset: i, bytes: fake, what: .address), p)
            i += 6
        }
        guard application, !options.keepNames, names.count > 0 else { return }
        replaceNames(in: p, from: from, framing: framing ?? AdvertisingFraming.protected(p))
    }

    /// Edits replacing every known name and identifier in `p[from...]` (not over other edits nor
    /// over `framing`'s bytes).
    func replaceNames(in p: UnsafeRawBufferPointer, from: Int, framing: [Bool]? = nil) {
        let subs = substitutions()
        for (offset, k) in nameOccurrences(p, from: from) where !overlapsEdit(offset, subs[k].from.count) {
            addAround(framing, RedactionEdit(offset: offset, bytes: subs[k].to, what: subs[k].what), p)
        }
    }

    /// Adds `edit` without its bytes that `framing` protects (one edit per run of the others), so
    /// the structure stays as it was. When that would leave the original bytes unchanged, the whole
    /// edit is added: nothing private may stay.
    private func addAround(_ framing: [Bool]?, _ edit: RedactionEdit, _ p: UnsafeRawBufferPointer) {
        let span = edit.offset ..< edit.offset + edit.bytes.count
        guard let framing, span.contains(where: { framing[$0] }) else { return add(edit) }
        guard span.contains(where: { !framing[$0] && p[$0] != edit.bytes[$0 - edit.offset] }) else { return add(edit) }
        var k = span.lowerBound
        while k < span.upperBound {
            guard !framing[k] else { k += 1; continue }
            var end = k
            while end < span.upperBound, !framing[end] { end += 1 }
            add(RedactionEdit(offset: k, bytes: Array(edit.bytes[(k - edit.offset) ..< (end - edit.offset)]), what: edit.what))
            k = end
        }
    }

    /// Where known names and identifiers occur in `bytes[from...]`: at each position the longest
    /// that matches, without overlaps (one pass, candidates looked up by their first byte).
    func nameOccurrences<C: RandomAccessCollection>(_ bytes: C, from: Int) -> [(offset: Int, index: Int)]
    where C.Element == UInt8, C.Index == Int {
        let subs = substitutions()
        var out: [(Int, Int)] = []
        var j = max(from, bytes.startIndex)
        while j < bytes.endIndex {
            var next = j + 1
            for k in byFirstByte[Int(bytes[j])] where subs[k].from.count <= bytes.endIndex - j {
                if bytes[j ..< j + subs[k].from.count].elementsEqual(subs[k].from) {
                    out.append((j, k))
                    next = j + subs[k].from.count
                    break
                }
            }
            j = next
        }
        return out
    }

    /// Known names (4 characters or more) then the identifiers in them, each with its fake.
    func substitutions() -> [(from: [UInt8], to: [UInt8], what: RedactionEdit.What)] {
        if substitutionsFor != names.count {
            substitutionsFor = names.count
            let known = names.known.filter { $0.count >= 4 }
            let all: [(from: [UInt8], to: [UInt8], what: RedactionEdit.What)] = known.map { ($0, names.fake(text: $0), .name) }
                + IdentifierMap.identifiers(in: known).map { ($0, identifiers.fake($0), .identifier) }
            cachedSubstitutions = all.sorted { $0.from.count > $1.from.count }
            byFirstByte = Array(repeating: [], count: 256)
            for (k, sub) in cachedSubstitutions.enumerated() { if let first = sub.from.first { byFirstByte[Int(first)].append(k) } }
        }
        return cachedSubstitutions
    }

    /// `value` with known names and identifiers replaced (what the copy will hold).
    func withNamesReplaced(_ value: [UInt8]) -> [UInt8] {
        guard !options.keepNames, names.count > 0 else { return value }
        let subs = substitutions()
        var out = value
        for (offset, k) in nameOccurrences(value, from: 0) {
            out.replaceSubrange(offset ..< offset + subs[k].from.count, with: subs[k].to)
        }
        return out
    }

    /// A 48-bit address with its byte order reversed (an address written big-endian in app data).
    static func reversed48(_ v: UInt64) -> UInt64 {
        var out: UInt64 = 0
        for k in 0 ..< 6 { out |= ((v >> UInt64(8 * k)) & 0xFF) << UInt64(8 * (5 - k)) }
        return out
    }

    func overlapsEdit(_ offset: Int, _ count: Int) -> Bool {
        edits.contains { $0.offset < offset + count && offset < $0.offset + $0.bytes.count }
    }

    // MARK: Sites → edits

    /// Edits for one field. `map` (here and below): where the bytes of a PDU reassembled from several
    /// fragments lie (frames, file offsets); nil for bytes of the current frame (absolute offsets
    /// relative to `inFrame`).
    func apply(_ site: FieldSite, inFrame base: Int, map: FragmentMap?, textAllowed: Bool) {
        guard let bytes = read(site.range, base: base, map: map) else { return }
        let replacement: [UInt8]
        let what: RedactionEdit.What
        switch site.kind {
        case .address:
            guard bytes.count == 6, site.complete else {
                emit(site.range, [UInt8](repeating: 0, count: bytes.count), .address, base: base, map: map)
                return
            }
            replacement = bytes.withUnsafeBytes { addresses.fake(bytes: $0) }
            what = .address
        case .secret:
            replacement = [UInt8](repeating: 0, count: bytes.count)
            what = .key
        case .text:
            guard textAllowed, !options.keepNames else { return }
            replacement = bytes.withUnsafeBytes { names.fake($0, nulPadded: true) }
            what = .name
        case .custom:
            if case .text? = site.value, site.id == .deviceName {
                guard !options.keepNames else { return }
                replacement = bytes.withUnsafeBytes { names.fake($0, nulPadded: false) }
                what = .name
            } else if case let .list(items)? = site.value, Self.isADList(items) {
                advertisingData(site.range, items: items, base: base, map: map)
                return
            } else {
                return
            }
        }
        emit(site.range, replacement, what, base: base, map: map)
    }

    /// A `.custom` value that is a list of AD structures (`ADFieldSpec`): every item starts with its
    /// type (`FieldID.adType`), or is the `malformed` note of a structure running past the data.
    static func isADList(_ items: [[Field]]) -> Bool {
        !items.isEmpty && items.allSatisfy { item in
            guard let first = item.first?.id else { return false }
            return first == .adType || first == .malformed
        }
    }

    /// AD types whose data is an address list (Public/Random Target Address) or an LE Bluetooth
    /// Device Address (address + type byte), key material, or a name (Core Supplement Part A 1).
    static let adAddressTypes: Set<UInt8> = [0x17, 0x18, 0x1B]
    static let adKeyTypes: Set<UInt8> = [0x0E, 0x0F, 0x10, 0x1D, 0x1E, 0x22, 0x23, 0x2D]
    static let adNameTypes: Set<UInt8> = [0x08, 0x09, 0x30]

    /// Walks the AD structures of a field the tables decoded as advertising data. The field may
    /// start with a length byte (advertising reports); the start whose structure types match the
    /// decoded list is the one used.
    private func advertisingData(_ range: ByteRange, items: [[Field]], base: Int, map: FragmentMap?) {
        guard let bytes = read(range, base: base, map: map) else { return }
        let decodedTypes: [UInt64] = items.compactMap { item in
            if case let .integer(t, _)? = item.first?.value, item.first?.id == .adType { return t }
            return nil
        }
        bytes.withUnsafeBytes { raw in
            for skip in [0, 1] where skip <= raw.count {
                var it = AD.StructureIterator(ByteReader(UnsafeRawBufferPointer(rebasing: raw[skip...]), base: range.offset + skip))
                var structures: [AD.Structure] = []
                while let s = it.next() { structures.append(s) }
                guard structures.map({ UInt64($0.type.rawValue) }) == decodedTypes else { continue }
                for s in structures { adStructure(s, base: base, map: map) }
                return
            }
        }
    }

    func adStructure(_ s: AD.Structure, base: Int, map: FragmentMap?) {
        let type = s.type.rawValue
        let data = s.data.remainingRange
        guard data.count > 0 else { return }
        if Self.adKeyTypes.contains(type), type != 0x10 || data.count == 16 {
            emit(data, [UInt8](repeating: 0, count: data.count), .key, base: base, map: map)
        } else if Self.adAddressTypes.contains(type) {
            // Addresses of 6 bytes (0x1B: then a type byte); a short remainder is zeroed.
            var offset = 0
            while data.count - offset >= 6 {
                let r = ByteRange(offset: data.offset + offset, count: 6)
                if let b = read(r, base: base, map: map) {
                    emit(r, b.withUnsafeBytes { addresses.fake(bytes: $0) }, .address, base: base, map: map)
                }
                offset += 6
                if type == 0x1B { break }
            }
            if type != 0x1B, offset < data.count {
                emit(ByteRange(offset: data.offset + offset, count: data.count - offset),
                     [UInt8](repeating: 0, count: data.count - offset), .address, base: base, map: map)
            }
        } else if Self.adNameTypes.contains(type), !options.keepNames {
            if let b = read(data, base: base, map: map) {
                emit(data, b.withUnsafeBytes { names.fake($0, nulPadded: false) }, .name, base: base, map: map)
            }
        }
    }

    /// The bytes of an absolute range: in the current frame, or in a reassembled PDU's fragments.
    func read(_ range: ByteRange, base: Int, map: FragmentMap?) -> [UInt8]? {
        guard let frame, range.count >= 0 else { return nil }
        if map == nil {
            let start = range.offset - base
            guard start >= 0, range.count <= frame.payload.count - start else { return nil }
            return Array(frame.payload[start ..< start + range.count])
        }
        return pduBytes?(range)
    }

    /// Reads bytes of the PDU being decoded (set while an L2CAP PDU is scanned).
    private var pduBytes: ((ByteRange) -> [UInt8]?)?

    /// Records `bytes` to replace `range`: in the current frame, or split over the fragments of a
    /// reassembled PDU (pieces in earlier frames are deferred).
    func emit(_ range: ByteRange, _ bytes: [UInt8], _ what: RedactionEdit.What, base: Int, map: FragmentMap?) {
        guard let frame, bytes.count == range.count, range.count > 0 else { return }
        guard let map else {
            let start = range.offset - base
            guard start >= 0, range.count <= frame.payload.count - start else { return }
            add(RedactionEdit(offset: start, bytes: bytes, what: what))
            return
        }
        var pduOffset = range.offset - map.readerBase
        var consumed = 0
        for segment in map {
            guard consumed < bytes.count else { break }
            guard pduOffset < segment.pduStart + segment.length, pduOffset >= segment.pduStart else { continue }
            let inSegment = pduOffset - segment.pduStart
            let n = min(segment.length - inSegment, bytes.count - consumed)
            let piece = Array(bytes[consumed ..< consumed + n])
            if segment.frame == frame.number {
                // For an air frame, the fragment's bytes lie inside it (the synthetic ACL packet's).
                add(RedactionEdit(offset: segment.fileOffset + inSegment - frame.payloadOffset, bytes: piece, what: what))
            } else if collectDeferred {
                deferred[segment.frame, default: []].append(RedactionEdit(offset: segment.fileOffset + inSegment, bytes: piece, what: what))
            }
            consumed += n
            pduOffset += n
        }
    }

    func add(_ edit: RedactionEdit, unlessOverlapping: Bool = false) {
        // The same bytes found twice (an AD name as a table field and by the AD walk): keep one.
        if edits.contains(where: { $0.offset == edit.offset && $0.bytes.count == edit.bytes.count }) { return }
        if unlessOverlapping, overlapsEdit(edit.offset, edit.bytes.count) { return }
        edits.append(edit)
    }

    // MARK: L2CAP

    /// Every complete L2CAP PDU, decoded for display with the session's ATT context (as `packets`).
    private func l2capPDU(_ completed: CompletedPDU) {
        guard let frame else { return }
        let pdu = completed.bytes, connection = completed.connection, received = completed.received
        let map = completed.map.isFragmented ? completed.map : nil
        let multi = map != nil
        let pduStart = pdu.absoluteOffset
        let pduCount = pdu.remaining
        let pduRaw = pdu.remainingBytes
        pduBytes = { range in
            let start = range.offset - pduStart
            guard start >= 0, range.count >= 0, range.count <= pduCount - start else { return nil }
            return Array(pduRaw[start ..< start + range.count])
        }
        defer { pduBytes = nil }
        let base = multi ? pduStart : frame.payloadOffset
        let cid = completed.channel
        var sites: [FieldSite] = []
        let visitor = FieldVisitor { sites.append($0) }
        var r = pdu
        _ = visitor.during { connection.displayLayers(&r, received: received) }
        for site in sites { apply(site, inFrame: base, map: map, textAllowed: false) }
        if cid == 0x0004, pduCount > 4 {
            let bytes = Array(pduRaw.prefix(pduCount))
            attValues(bytes, pduStart: pduStart, connection, received: received, base: base, map: map,
                      firstFrame: map?.first?.frame ?? frame.number)
        }
        // SMP key material in a PDU of the wrong size is shown raw, not through the table: zero it.
        // The parameters follow the basic header and the code (Core v5.4 Vol 3 Part H 3.3).
        let smpParameters = L2CAP.basicHeaderLength + 1
        if cid == L2CAP.ChannelID.smp.rawValue || cid == L2CAP.ChannelID.brEdrSMP.rawValue, pduCount > smpParameters,
           let code = pdu.peekU8(at: L2CAP.basicHeaderLength), let size = SMP.keyParameterSize(SMPCode(code)), pduCount - smpParameters != size {
            let range = ByteRange(offset: pduStart + smpParameters, count: pduCount - smpParameters)
            emit(range, [UInt8](repeating: 0, count: range.count), .key, base: base, map: map)
        }
    }

    /// The values of an ATT PDU (`bytes` from the L2CAP header): replaced with `--drop-values`
    /// unless the analysis reads them; otherwise their printable text is noted for the summary.
    private func attValues(_ bytes: [UInt8], pduStart: Int, _ connection: Connection, received: Bool, base: Int,
                           map: FragmentMap?, firstFrame: Int) {
        guard let code = bytes.withReader({ $0.getU8(at: L2CAP.basicHeaderLength) }) else { return }
        let opcode = ATTOpcode(code)
        let sent = !received
        // Handed over before the session acts on the PDU: a response's request is still outstanding.
        let request = connection.att.outstanding(from: ATTBearer.Side.sender(sent: sent).other)
        let db = connection.gatt(serverIsHost: ATTRoles.serverIsHost(opcode, sent: sent))
        for span in ATTValueSpans.spans(bytes[L2CAP.basicHeaderLength...], request: request, db: db) {
            if options.dropValues, !span.kept {
                if sweep { droppedValues += 1 }
                let start = L2CAP.basicHeaderLength + span.start
                emit(ByteRange(offset: pduStart + start, count: span.count),
                     values.fake(Array(bytes[start ..< start + span.count])), .value, base: base, map: map)
                continue
            }
            guard sweep else { continue }
            if !span.kept { keptValues += 1 }
            let start = L2CAP.basicHeaderLength + span.start
            let value = withNamesReplaced(Array(bytes[start ..< start + span.count]))
            for text in PrintableRuns.find(value) {
                let key = KeptKey(text: text, handle: span.handle)
                if kept[key] != nil { kept[key]?.occurrences += 1; continue }
                guard kept.count < Self.maxKeptStrings else { continue }
                let uuid = span.handle.flatMap { db?.uuid(of: $0) }
                kept[key] = KeptString(text: text, handle: span.handle, uuid: uuid?.description,
                                       attribute: span.handle.flatMap { db?.name(of: $0) }, firstFrame: firstFrame, occurrences: 1)
                keptOrder.append(key)
            }
        }
    }

    /// The kept strings in order of first appearance.
    var keptStrings: [KeptString] { keptOrder.compactMap { kept[$0] } }
}
