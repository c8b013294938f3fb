extension RandomAccessCollection where Index == Int {
    /// In a collection where `isBelow` holds for a prefix and for nothing after it (sorted by the key
    /// `isBelow` compares), the end of that prefix: a bisection. Connections by index, findings'
    /// empty places, links lost by time.
    func prefixEnd(where isBelow: (Element) -> Bool) -> Int {
        var lo = startIndex, hi = endIndex
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            if isBelow(self[mid]) { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
