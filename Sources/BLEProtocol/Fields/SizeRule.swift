/// The size rule of a table row, derived once from its field specs (btmon's `cmd_size`/`cmd_fixed`):
/// the dispatcher checks a packet's parameter length against it in O(1), without decoding fields,
/// so the analysis pass can tell a malformed packet as cheaply as it skips a good one.
public struct SizeRule: Sendable, Equatable {
    /// Fewest parameter bytes a valid message has.
    public let minimum: Int
    /// True when every valid message has exactly `minimum` bytes.
    public let fixed: Bool

    public init(minimum: Int, fixed: Bool) { (self.minimum, self.fixed) = (minimum, fixed) }

    public init(_ params: [Param]) {
        var minimum = 0, fixed = true
        for p in params {
            let (m, f) = Self.size(p.spec)
            minimum += m
            fixed = fixed && f
        }
        self.init(minimum: minimum, fixed: fixed)
    }

    /// Whether `length` parameter bytes can be a valid message.
    @inlinable public func accepts(_ length: Int) -> Bool { fixed ? length == minimum : length >= minimum }

    /// Where the parameters of a row lie while their offsets are fixed: each with its offset from the
    /// row's first byte and its width, up to (not including) the first variable-size one. What code
    /// that reads or rewrites a row's fields in place (`RowField`, replay's `HostRewriter`) walks,
    /// instead of summing widths itself.
    public static func fixedLayout(_ params: [Param]) -> [(param: Param, offset: Int, size: Int)] {
        var out: [(param: Param, offset: Int, size: Int)] = []
        var offset = 0
        for p in params {
            let (size, fixed) = Self.size(p.spec)
            guard fixed else { break }
            out.append((p, offset, size))
            offset += size
        }
        return out
    }

    static func size(_ spec: FieldSpec) -> (Int, Bool) {
        switch spec {
        case let .uint(n), let .hex(n), let .signed(n, _), let .scaled(n, _, _), let .named(n, _), let .flags(n, _),
             let .bytes(n), let .secret(n), let .text(n):
            return (n, true)
        case .status, .addressType: return (1, true)
        case .handle: return (2, true)
        case .address: return (6, true)
        case .rest, .repeated, .custom: return (0, false)
        case let .counted(countBytes, _): return (countBytes, false)
        case .parallel: return (1, false)
        case let .group(params):
            let r = SizeRule(params)
            return (r.minimum, r.fixed)
        }
    }
}
