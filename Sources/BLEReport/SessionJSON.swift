import BLEBytes
import BLEProtocol
import BLEAnalysis

/// JSON for `timeline`, `gatt` and `adv`.
public enum SessionJSON {
    public static func timeline(_ model: SessionModel, only: Set<Int>? = nil) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.beginArray("connections")
        for c in model.connections where only?.contains(c.index) ?? true { connection(c, &w) }
        w.endArray()
        w.beginArray("attempts")
        for a in model.attempts where only == nil {
            w.beginObject()
            w.int("frame", a.frame)
            w.int("time", a.time)
            w.optional("peer", a.peerAddress?.description)
            switch a.outcome {
            case .pending: w.string("outcome", "pending")
            case let .connected(i): w.string("outcome", "connected"); w.int("connection", i)
            case let .failed(s): w.string("outcome", "failed"); w.int("status", s.rawValue); w.string("statusName", s.name)
            case .cancelled: w.string("outcome", "cancelled")
            case .superseded: w.string("outcome", "superseded")
            }
            w.optional("endFrame", a.endFrame)
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.output
    }

    static func connection(_ c: Connection, _ w: inout JSONWriter) {
        w.beginObject()
        fields(ConnectionSummary(c), inferred: c.lifecycle.inferred, &w)
        TransferJSON.write(c, &w)
        w.beginArray("events")
        for e in SessionText.mergedEvents(c) {
            w.beginObject()
            w.int("time", e.time)
            w.int("frame", e.frame)
            w.string("kind", e.kind.rawValue)
            w.string("text", e.text)
            event(e, of: c, &w)
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }

    /// The fields every connection row has, held whole or summarised (docs/report-schema.json
    /// `$defs/connection`), in their order.
    static func fields(_ s: ConnectionSummary, inferred: Bool, _ w: inout JSONWriter) {
        w.int("index", s.index)
        w.int("adapter", s.adapter)
        w.int("handle", s.handle)
        w.string("transport", s.isLE ? "LE" : "BR/EDR")
        w.string("role", s.role.rawValue)
        w.optional("peer", s.peerAddress?.description)
        w.optional("peerAddressType", s.peerAddressType?.name)
        if let name = s.peerName { w.string("peerName", name) }
        w.bool("inferred", inferred)
        w.optional("connectFrame", s.completeFrame)
        w.optional("connectTime", s.completeTime)
        w.optional("disconnectFrame", s.disconnectFrame)
        w.optional("disconnectTime", s.disconnectTime)
        if let r = s.disconnectReason { w.int("disconnectReason", r.rawValue); w.string("disconnectReasonName", r.name) }
        if s.intervalUnits > 0 { w.double("intervalMs", s.intervalMillis); w.int("latency", s.latency); w.int("supervisionTimeoutMs", Int(s.timeoutUnits) * 10) }
        w.int("mtu", s.mtu)
        w.bool("mtuKnown", s.mtuKnown)
        w.int("aclSent", s.aclSent)
        w.int("aclReceived", s.aclReceived)
        w.int("attRequests", s.attRequests)
        w.int("attResponses", s.attResponses)
        if let avg = s.attLatencyAverage { w.int("attLatencyAverageMicros", avg); w.int("attLatencyMaxMicros", s.attLatencyMax) }
    }

    /// A summarised connection's row (`ConnectionSummary`): the fields of `connection` it keeps,
    /// `summarised: true`, no transfer or events.
    static func summarised(_ s: ConnectionSummary, _ w: inout JSONWriter) {
        w.beginObject()
        fields(s, inferred: false, &w)
        if let k = s.endCause { w.string("endCause", k.rawValue) }
        w.bool("summarised", true)
        w.endObject()
    }

    /// The typed fields of a timeline event (docs/timeline-schema.json): `mtu` on MTU events, `handle` and
    /// `uuid` on subscription and value events, `peer`/`peerName` on connection events, `reason` on
    /// disconnections, `security` on security events (BR/EDR ones with `keySize`, `cipher`, `linkKeyType`/`linkKey`,
    /// `method`), `firstOfHandle` on the first value of a handle.
    static func event(_ e: TimelineEvent, of c: Connection, _ w: inout JSONWriter) {
        if let mtu = e.fields.mtu { w.int("mtu", mtu) }
        if let h = e.fields.handle { w.int("handle", h) }
        if let u = e.fields.uuid { w.string("uuid", u.description) }
        if let r = e.fields.reason { w.int("reason", r) }
        if let step = e.fields.security { w.string("security", step.rawValue) }
        if e.fields.firstOfHandle { w.bool("firstOfHandle", true) }
        if let k = e.fields.keySize { w.int("keySize", Int(k)) }
        if let cipher = e.fields.cipher { w.string("cipher", cipher.rawValue) }
        if let key = e.fields.linkKey { w.int("linkKeyType", Int(key.rawValue)); w.string("linkKey", key.description) }
        if let m = e.fields.method { w.string("method", m.rawValue) }
        switch e.kind {
        case .connected, .attempt, .connectionFailed, .disconnected:
            if let a = c.peerAddress { w.string("peer", a.description) }
            if let n = c.peerName { w.string("peerName", n) }
            if e.kind == .disconnected, e.frame == c.lifecycle.disconnectFrame, let end = c.endCause {
                w.beginObject("cause")
                w.string("kind", end.cause.kind.rawValue)
                w.beginArray("frames")
                for n in end.cause.frames { w.int(nil, n) }
                w.endArray()
                w.string("text", end.cause.text.naming(c))
                w.endObject()
            }
        default:
            break
        }
    }

    public static func gatt(_ model: SessionModel) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.beginArray("servers")
        for db in model.databases.values.filter({ !$0.isEmpty }).sorted(by: { $0.owner < $1.owner }) {
            w.beginObject()
            w.string("owner", db.owner)
            w.optional("peerName", db.peerName)
            w.beginArray("connections")
            for n in db.servedConnections { w.int(nil, n) }
            w.endArray()
            w.beginArray("services")
            for s in db.services.values.sorted(by: { $0.handle < $1.handle }) {
                w.beginObject()
                w.int("handle", s.handle)
                w.int("endHandle", s.endHandle)
                w.string("uuid", s.uuid.description)
                w.optional("name", s.uuid.name)
                w.bool("primary", s.primary)
                w.beginArray("characteristics")
                for c in db.characteristics.values.sorted(by: { $0.declarationHandle < $1.declarationHandle })
                where c.declarationHandle > s.handle && c.declarationHandle <= s.endHandle {
                    w.beginObject()
                    w.int("handle", c.declarationHandle)
                    w.int("valueHandle", c.valueHandle)
                    w.string("uuid", c.uuid.description)
                    w.optional("name", c.uuid.name)
                    w.int("properties", c.properties)
                    w.beginArray("propertyNames")
                    for n in GATTNames.characteristicProperties.flagNames(UInt64(c.properties)).names { w.string(nil, n) }
                    w.endArray()
                    w.beginArray("descriptors")
                    let next = db.characteristics.keys.filter { $0 > c.declarationHandle }.min() ?? (s.endHandle &+ 1)
                    for d in db.descriptors.values.sorted(by: { $0.handle < $1.handle })
                    where d.handle > c.valueHandle && d.handle < next && d.handle <= s.endHandle {
                        w.beginObject()
                        w.int("handle", d.handle)
                        w.string("uuid", d.uuid.description)
                        w.optional("name", d.uuid.name)
                        w.endObject()
                    }
                    w.endArray()
                    w.endObject()
                }
                w.endArray()
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.output
    }

    /// - Parameter only: the advertisers to list (`adv --peer`); nil: all. `reports` counts them all.
    public static func advertisers(_ model: SessionModel, only: ((Advertisers.Advertiser) -> Bool)? = nil) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.int("reports", model.advertisers.totalReports)
        w.beginArray("advertisers")
        for a in model.advertisers.all where only?(a) ?? true {
            w.beginObject()
            w.string("address", a.address.description)
            w.string("addressType", a.addressType.describe(a.address))
            if let vendor = OUI.vendorBytes(a.address, type: a.addressType, id: .unspecified) {
                w.string("vendor", String(decoding: vendor, as: UTF8.self))   // public addresses only (IEEE OUI)
            }
            w.int("reports", a.reports)
            w.int("scanResponses", a.scanResponses)
            w.bool("connectable", a.connectable)
            w.bool("extended", a.extended)
            w.beginArray("names"); for n in a.names { w.string(nil, n) }; w.endArray()
            w.beginArray("services"); for u in a.services { w.string(nil, u.description) }; w.endArray()
            w.beginArray("companies"); for c in a.companies { w.int(nil, c) }; w.endArray()
            w.optional("txPower", a.txPower)
            w.optional("appearance", a.appearance)
            w.optional("rssiMin", a.rssiMin)
            w.optional("rssiMedian", a.rssiMedian)
            w.optional("rssiMax", a.rssiMax)
            w.optional("intervalEstimateMicros", a.intervalEstimate)
            w.int("firstTime", a.firstTime)
            w.int("lastTime", a.lastTime)
            w.beginArray("malformed"); for m in a.malformed { w.string(nil, m) }; w.endArray()
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.output
    }
}
