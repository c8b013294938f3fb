import BLEProtocol

/// The application's ATT requests on one bearer, answered ones only, counted per client side,
/// request opcode and attribute handle: how many, how many got an Error Response, and the time to
/// the answer (Core v5.4 Vol 3 Part F 3.3.2: a client has one request outstanding, so the answer
/// that follows is this request's). Discovery and the MTU exchange are told elsewhere (the
/// discovery and MTU story lines) and not counted here. Bounded: at most `maxEntries` keys.
public struct RequestStats: Sendable {
    public struct Entry: Sendable {
        public var opcode: ATTOpcode
        public var handle: UInt16?
        /// The host was the client.
        public var sentByHost: Bool
        public var count = 0
        public var errors = 0
        public var latencyTotal: Int64 = 0
        public var latencyMax: Int64 = 0
        public var firstFrame: Int
        public var firstTime: Int64
    }

    public private(set) var entries: [Entry] = []
    /// Answers not counted because `entries` was full.
    public private(set) var uncounted = 0
    static let maxEntries = 64
    /// The entry the last answer went to: an app repeats the same request, so most answers hit it.
    private var last = 0

    public init() {}

    mutating func record(_ p: ATTBearer.Pending, answeredAt time: Int64, error: Bool) {
        guard Self.isApplication(p.opcode) else { return }
        let i: Int
        func matches(_ e: Entry) -> Bool { e.opcode == p.opcode && e.handle == p.handle && e.sentByHost == p.sentByHost }
        if last < entries.count, matches(entries[last]) {
            i = last
        } else if let found = entries.firstIndex(where: matches) {
            i = found
        } else {
            guard entries.count < Self.maxEntries else { uncounted += 1; return }
            entries.append(Entry(opcode: p.opcode, handle: p.handle, sentByHost: p.sentByHost, firstFrame: p.frame, firstTime: p.time))
            i = entries.count - 1
        }
        last = i
        let latency = max(0, time - p.time)
        entries[i].count += 1
        if error { entries[i].errors += 1 }
        entries[i].latencyTotal += latency
        entries[i].latencyMax = max(entries[i].latencyMax, latency)
    }

    /// Requests an application makes (reads and writes), not discovery or the MTU exchange.
    static func isApplication(_ op: ATTOpcode) -> Bool {
        switch op {
        case .readRequest, .readBlobRequest, .readMultipleRequest, .readMultipleVariableRequest, .writeRequest,
             .prepareWriteRequest, .executeWriteRequest:
            true
        default:
            false   // discovery (Read By Type too), the MTU exchange
        }
    }
}
