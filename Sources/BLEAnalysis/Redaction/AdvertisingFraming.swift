import BLEProtocol

/// The bytes of an LE advertising report event that the analysis reads for structure, which the
/// address and name sweep must not replace: a known address's six bytes can run across a report's
/// Data Length or an AD structure's Length and AD Type (found by fuzzing), and replacing them all
/// would turn a complete AD structure into one that runs past the data, which changes findings.
/// The sweep replaces the other bytes of such a run, so the address is still gone.
///
/// Layouts: LE Advertising Report (Core v5.4 Vol 4 Part E 7.7.65.2), LE Directed Advertising
/// Report (7.7.65.11), LE Extended Advertising Report (7.7.65.13), walked report after report as
/// the decoder does; AD structures (Vol 3 Part C 11: Length, AD Type, AD Data).
enum AdvertisingFraming {
    /// Per payload byte, true where it is framing; nil when `p` is not an advertising report event
    /// whose reports all fit (a malformed event is swept as before: its structure is already broken).
    static func protected(_ p: UnsafeRawBufferPointer) -> [Bool]? {
        guard p.count >= 4, p[0] == HCIEventCode.leMeta else { return nil }
        let layout: Layout
        switch p[2] {
        case LESubevent.advertisingReport: layout = .legacy
        case LESubevent.extendedAdvertisingReport: layout = .extended
        case LESubevent.directedAdvertisingReport: layout = .directed
        default: return nil
        }
        var mask = [Bool](repeating: false, count: p.count)
        // Event code, parameter length, subevent code and Num Reports.
        for k in 0 ..< 4 { mask[k] = true }
        var o = 4
        for _ in 0 ..< Int(p[3]) {
            guard o + layout.fixed <= p.count else { return nil }
            for k in layout.framing { mask[o + k] = true }
            guard let lengthAt = layout.dataLength else { o += layout.fixed; continue }
            let length = Int(p[o + lengthAt])
            let data = o + lengthAt + 1
            guard data + length + layout.afterData <= p.count else { return nil }
            markStructures(&mask, data ..< data + length, p)
            for k in 0 ..< layout.afterData { mask[data + length + k] = true }
            o = data + length + layout.afterData
        }
        return mask
    }

    /// Marks each AD structure's Length and AD Type; a zero Length ends the significant part.
    private static func markStructures(_ mask: inout [Bool], _ data: Range<Int>, _ p: UnsafeRawBufferPointer) {
        var i = data.lowerBound
        while i < data.upperBound {
            mask[i] = true
            let length = Int(p[i])
            if length == 0 { return }
            if i + 1 < data.upperBound { mask[i + 1] = true }
            i += 1 + length
        }
    }

    /// Per report: its fixed part's size, the offsets in it the analysis reads (every field but the
    /// addresses), where Data Length is, and the bytes after the data (legacy RSSI).
    private struct Layout {
        let fixed: Int
        let framing: [Int]
        let dataLength: Int?
        let afterData: Int

        /// Event Type, Address Type, Address (6), Data Length; then Data and RSSI.
        static let legacy = Layout(fixed: 9, framing: [0, 1, 8], dataLength: 8, afterData: 1)
        /// Event Type (2), Address Type, Address (6), PHYs, SID, TX Power, RSSI, Interval (2),
        /// Direct Address Type, Direct Address (6), Data Length; then Data.
        static let extended = Layout(fixed: 24, framing: [0, 1, 2, 9, 10, 11, 12, 13, 14, 15, 16, 23], dataLength: 23, afterData: 0)
        /// Event Type, Address Type, Address (6), Direct Address Type, Direct Address (6), RSSI.
        static let directed = Layout(fixed: 16, framing: [0, 1, 8, 15], dataLength: nil, afterData: 0)
    }
}
