import BLEAnalysis
import BLEBytes
import BLEProtocol

/// `bleanalyze diff --json`: one document, schema docs/diff-schema.json.
public enum DiffJSON {
    public static func render(_ d: CaptureComparison, before: (file: String, frames: Int), after: (file: String, frames: Int), failed: Bool) -> String {
        var w = JSONWriter()
        w.beginObject()
        for (key, side) in [("before", before), ("after", after)] {
            w.beginObject(JSONKey(key)); w.string("file", side.file); w.int("frames", side.frames); w.endObject()
        }
        w.beginArray("peers")
        for p in d.peers { peer(p, &w) }
        w.endArray()
        w.beginArray("findings")
        for f in d.findings { finding(f, &w) }
        w.endArray()
        w.beginArray("regressions")
        for r in d.regressions { regression(r, &w) }
        w.endArray()
        w.beginObject("thresholds")
        w.double("slowerFraction", d.options.slowerFraction)
        w.int("slowerFloorMicros", d.options.slowerFloorMicros)
        w.bool("allowGattChange", d.options.allowGATTChange)
        w.endObject()
        w.bool("failed", failed)
        w.endObject()
        return w.output
    }

    static func side(_ key: JSONKey, _ p: CaptureProfile.Peer?, _ w: inout JSONWriter) {
        guard let p else { w.null(key); return }
        w.beginObject(key)
        w.optional("name", p.name)
        w.optional("address", p.address?.description)
        w.optional("identityAddress", p.identityAddress?.description)
        w.beginArray("companies"); for c in p.companies { w.int(nil, c) }; w.endArray()
        w.beginArray("connections"); for c in p.connections { w.int(nil, c.index) }; w.endArray()
        w.endObject()
    }

    static func peer(_ p: CaptureComparison.PeerPair, _ w: inout JSONWriter) {
        w.beginObject()
        w.string("label", p.label)
        w.string("match", p.match.rawValue)
        side("before", p.before, &w)
        side("after", p.after, &w)
        w.beginArray("connections")
        for c in p.connections { connection(c, &w) }
        w.endArray()
        if let g = p.gatt {
            w.beginArray("gatt"); for x in g { gatt(x, &w) }; w.endArray()
        } else {
            w.null("gatt")
        }
        w.endObject()
    }

    static func unit(_ m: CaptureComparison.Metric) -> String {
        switch m {
        case .connect, .discover, .subscribe, .encrypt: "us"
        case .interval, .finalInterval: "1.25ms"
        case .timeout, .finalTimeout: "10ms"
        case .latency, .finalLatency: "events"
        case .mtu, .dataLength, .keySize: "octets"
        case .phy: "phy"
        case .disconnect: "hci-status"
        case .pairing, .secureConnections: "text"
        }
    }

    static func value(_ key: JSONKey, _ v: CaptureComparison.Value?, _ w: inout JSONWriter) {
        switch v {
        case let .micros(x)?: w.int(key, x)
        case let .number(x)?: w.int(key, x)
        case let .text(t)?: w.string(key, t)
        case nil: w.null(key)
        }
    }

    static func connection(_ c: CaptureComparison.ConnectionPair, _ w: inout JSONWriter) {
        w.beginObject()
        w.optional("before", c.before?.index)
        w.optional("after", c.after?.index)
        w.beginArray("changes")
        for ch in c.changes {
            w.beginObject()
            w.string("metric", ch.metric.rawValue)
            w.string("unit", unit(ch.metric))
            value("before", ch.before, &w)
            value("after", ch.after, &w)
            w.optional("beforeFrame", ch.beforeFrame)
            w.optional("afterFrame", ch.afterFrame)
            w.string("verdict", ch.verdict.rawValue)
            w.endObject()
        }
        w.endArray()
        w.beginArray("traffic")
        for t in c.traffic {
            w.beginObject()
            w.string("direction", t.sentByHost ? "sent" : "received")
            TransferJSON.direction("before", t.before, &w)
            TransferJSON.direction("after", t.after, &w)
            w.string("rateVerdict", t.rateVerdict.rawValue)
            w.endObject()
        }
        w.endArray()
        w.beginArray("latencies")
        for l in c.latencies {
            w.beginObject()
            w.string("kind", l.kind.rawValue)
            distribution("before", l.before, &w)
            distribution("after", l.after, &w)
            w.bool("slower", l.slower)
            reasons("because", l.because, &w)
            w.endObject()
        }
        w.endArray()
        reasons("trafficReasons", c.trafficReasons, &w)
        w.endObject()
    }

    static func distribution(_ key: JSONKey, _ d: LatencyDistribution, _ w: inout JSONWriter) {
        w.beginObject(key)
        w.int("count", d.count)
        w.optional("medianMicros", d.median)
        w.optional("p95Micros", d.p95)
        w.optional("maxMicros", d.count > 0 ? d.max : nil)
        w.optional("maxFrame", d.count > 0 ? d.maxFrame : nil)
        w.endObject()
    }

    static func reasons(_ key: JSONKey, _ rs: [CaptureComparison.Reason], _ w: inout JSONWriter) {
        w.beginArray(key)
        for r in rs {
            w.beginObject()
            switch r {
            case let .interval(b, a): w.string("kind", "interval"); w.int("before", b); w.int("after", a)
            case let .latency(b, a): w.string("kind", "latency"); w.int("before", b); w.int("after", a)
            case let .phy(b, a): w.string("kind", "phy"); w.int("before", b); w.int("after", a)
            case let .mtu(b, a): w.string("kind", "mtu"); w.int("before", b); w.int("after", a)
            case let .dataLength(b, a): w.string("kind", "data-length"); w.int("before", b); w.int("after", a)
            case let .writeRequests(b, a): w.string("kind", "write-requests"); w.int("before", b); w.int("after", a)
            case let .limitedBy(b, a):
                w.string("kind", "limited-by")
                w.beginArray("beforeLimits"); for l in b { w.string(nil, l.rawValue) }; w.endArray()
                w.beginArray("afterLimits"); for l in a { w.string(nil, l.rawValue) }; w.endArray()
            }
            w.string("text", DiffText.reason(r))
            w.endObject()
        }
        w.endArray()
    }

    static func gatt(_ g: CaptureComparison.GATTChange, _ w: inout JSONWriter) {
        w.beginObject()
        switch g {
        case let .serviceAdded(u, f): w.string("change", "service-added"); w.string("uuid", u.description); w.int("afterFrame", f)
        case let .serviceRemoved(u, f): w.string("change", "service-removed"); w.string("uuid", u.description); w.int("beforeFrame", f)
        case let .characteristicAdded(s, u, p, f):
            w.string("change", "characteristic-added"); w.string("service", s.description); w.string("uuid", u.description)
            w.int("propertiesAfter", p); w.int("afterFrame", f)
        case let .characteristicRemoved(s, u, p, f):
            w.string("change", "characteristic-removed"); w.string("service", s.description); w.string("uuid", u.description)
            w.int("propertiesBefore", p); w.int("beforeFrame", f)
        case let .propertiesChanged(s, u, b, a, bf, af):
            w.string("change", "properties-changed"); w.string("service", s.description); w.string("uuid", u.description)
            w.int("propertiesBefore", b); w.int("propertiesAfter", a); w.int("beforeFrame", bf); w.int("afterFrame", af)
        case let .descriptorAdded(s, c, u, f):
            w.string("change", "descriptor-added"); w.string("service", s.description); w.string("characteristic", c.description)
            w.string("uuid", u.description); w.int("afterFrame", f)
        case let .descriptorRemoved(s, c, u, f):
            w.string("change", "descriptor-removed"); w.string("service", s.description); w.string("characteristic", c.description)
            w.string("uuid", u.description); w.int("beforeFrame", f)
        }
        w.string("text", DiffText.gattLine(g))
        w.endObject()
    }

    static func findingSide(_ key: JSONKey, _ fs: [Finding], _ w: inout JSONWriter) {
        w.beginObject(key)
        w.int("count", fs.count)
        w.optional("severity", fs.map(\.severity).max()?.rawValue)
        w.beginArray("frames"); for x in fs.first?.frames ?? [] { w.int(nil, x) }; w.endArray()
        w.beginArray("causes"); for c in Set(fs.compactMap { $0.cause?.kind.rawValue }).sorted() { w.string(nil, c) }; w.endArray()
        w.optional("text", fs.first?.text)
        w.optional("why", fs.first?.causeText)
        w.endObject()
    }

    static func finding(_ f: CaptureComparison.FindingChange, _ w: inout JSONWriter) {
        w.beginObject()
        w.string("kind", f.kind.rawValue)
        w.string("rule", f.rule)
        w.string("peer", f.peer)
        w.optional("handle", f.handle)
        findingSide("before", f.before, &w)
        findingSide("after", f.after, &w)
        w.endObject()
    }

    static func regression(_ r: CaptureComparison.Regression, _ w: inout JSONWriter) {
        w.beginObject()
        switch r {
        case let .newFinding(f): w.string("kind", "new-finding"); w.string("rule", f.rule); w.string("peer", f.peer)
        case let .findingGrew(f): w.string("kind", "finding-grew"); w.string("rule", f.rule); w.string("peer", f.peer)
        case let .slower(peer, conn, l): w.string("kind", "slower"); w.string("peer", peer); w.int("connection", conn); w.string("latency", l.kind.rawValue)
        case let .gattChanged(peer, g): w.string("kind", "gatt-changed"); w.string("peer", peer); w.string("text", DiffText.gattLine(g))
        }
        w.endObject()
    }
}
