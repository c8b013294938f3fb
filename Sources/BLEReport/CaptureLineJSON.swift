import BLEAnalysis
import BLECapture
import BLEProtocol

/// One capture as one line of JSON (`bleanalyze check PATH... --jsonl`), for fleets of field logs:
/// what the file is, what the log says of the phone and its controller, the peers it talked to
/// (address type, name, Device Information strings) and the findings. Described by
/// docs/check-jsonl-schema.json. Interface other tools rely on: `file`, `sha256`, `format`,
/// `frames`, `error`, `host`, `peers`, `findings`, `ruleCounts` on every line.
public enum CaptureLineJSON {
    /// Peers listed per capture at most (a phone's day-long log may meet hundreds of devices).
    public static let maxPeers = 500

    /// The line of an analysed capture (without the newline).
    /// - Parameter accepted: with `check --baseline`, the indexes in `findings` the baseline accepts
    ///   (each finding then carries `accepted`); nil: no baseline, no key.
    public static func render(_ facts: CaptureFacts, model: SessionModel, hostNotes: HostNotes,
                              findings: [Finding], sha256: String?, accepted: Set<Int>? = nil) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.string("file", facts.path)
        w.optional("sha256", sha256)
        w.string("format", facts.info.format.rawValue)
        if let origin = facts.info.fieldLog {
            w.beginObject("fieldLog"); w.string("container", origin.container.rawValue); w.string("member", origin.member.name); w.endObject()
        } else {
            w.null("fieldLog")
        }
        w.int("frames", facts.summary.frames)
        if let a = facts.summary.firstTimestamp, let b = facts.summary.lastTimestamp {
            w.double("durationSeconds", Double(b - a) / 1e6)
        } else {
            w.null("durationSeconds")
        }
        w.null("error")
        host(facts, model: model, notes: hostNotes, &w)
        peers(model, &w)
        w.beginArray("findings")
        for (i, f) in findings.enumerated() {
            w.beginObject()
            w.string("rule", f.rule)
            w.string("severity", f.severity.rawValue)
            w.optional("connection", f.connection)
            // `frames` as the report's JSON has them; `frame` (the first) stays one release (deprecated).
            w.beginArray("frames"); for n in f.frames { w.int(nil, n) }; w.endArray()
            w.optional("frame", f.frames.first)
            w.string("message", f.text)
            if let accepted { w.bool("accepted", accepted.contains(i)) }
            w.endObject()
        }
        w.endArray()
        w.beginObject("ruleCounts")
        var counts: [String: Int] = [:]
        for f in findings { counts[f.rule, default: 0] += 1 }
        for (rule, n) in counts.sorted(by: { $0.key < $1.key }) { w.int(JSONKey(rule), n) }
        w.endObject()
        w.endObject()
        return w.output
    }

    /// The line of a file that could not be read: the message, and every other field empty.
    public static func unreadable(file: String, sha256: String?, error: String) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.string("file", file)
        w.optional("sha256", sha256)
        w.null("format")
        w.null("fieldLog")
        w.null("frames")
        w.null("durationSeconds")
        w.string("error", error)
        w.null("host")
        w.beginArray("peers"); w.endArray()
        w.beginArray("findings"); w.endArray()
        w.beginObject("ruleCounts"); w.endObject()
        w.endObject()
        return w.output
    }

    /// What the log says of the recording device: PacketLogger's notes, the bugreport's build
    /// fingerprint, the controller's Read Local Version Information (first adapter that answered).
    static func host(_ facts: CaptureFacts, model: SessionModel, notes: HostNotes, _ w: inout JSONWriter) {
        w.beginObject("host")
        w.optional("product", notes.product)
        w.optional("software", notes.software)
        w.optional("bluetoothHost", notes.bluetoothHost)
        w.optional("chipset", notes.chipset)
        w.optional("controllerFirmware", notes.controllerFirmware)
        w.optional("transport", notes.transport)
        w.optional("buildFingerprint", facts.info.fieldLog?.buildFingerprint)
        if let (adapter, v) = model.localVersions.min(by: { $0.key < $1.key }) {
            w.beginObject("controller")
            w.int("adapter", adapter)
            w.int("manufacturerId", v.manufacturer)
            w.optional("manufacturer", AssignedNumbers.companyName(v.manufacturer))
            w.int("hciVersion", v.hciVersion)
            w.optional("hciVersionName", LocalVersion.versionName(v.hciVersion))
            w.int("hciRevision", v.hciRevision)
            w.int("lmpVersion", v.lmpVersion)
            w.optional("lmpVersionName", LocalVersion.versionName(v.lmpVersion))
            w.int("lmpSubversion", v.lmpSubversion)
            w.endObject()
        } else {
            w.null("controller")
        }
        w.endObject()
    }

    /// The devices connected to, once per address (connections without an address, once each), in
    /// order of first connection: the connections held whole and the summarised ones (a long session's).
    static func peers(_ model: SessionModel, _ w: inout JSONWriter) {
        struct Peer { var address: BDAddr?; var isLE: Bool; var addressType: LEAddressType?; var name: String?; var connections: Int; var info: DeviceInformation }
        var order: [String] = []
        var byKey: [String: Peer] = [:]
        func add(_ index: Int, _ address: BDAddr?, _ isLE: Bool, _ type: LEAddressType?, _ name: String?, _ gatt: () -> GATTDatabase?) {
            let key = address?.description ?? "#\(index)"
            if var seen = byKey[key] {
                seen.connections += 1
                seen.name = seen.name ?? name
                if seen.info.isEmpty { seen.info = gatt().map(DeviceInformation.init) ?? DeviceInformation() }
                byKey[key] = seen
            } else if order.count < maxPeers {
                order.append(key)
                byKey[key] = Peer(address: address, isLE: isLE, addressType: type, name: name, connections: 1,
                                  info: gatt().map(DeviceInformation.init) ?? DeviceInformation())
            }
        }
        var rows = model.summarised.makeIterator(), row = rows.next()
        func summarised(_ s: ConnectionSummary) {
            add(s.index, s.peerAddress, s.isLE, s.peerAddressType, s.peerName) { s.peerAddress.flatMap { model.databases[$0.description] } }
        }
        for c in model.connections {
            while let s = row, s.index < c.index { summarised(s); row = rows.next() }
            add(c.index, c.peerAddress, c.isLE, c.peerAddressType, c.peerName) { c.peerGATT }
        }
        while let s = row { summarised(s); row = rows.next() }
        w.beginArray("peers")
        for key in order {
            guard let p = byKey[key] else { continue }
            w.beginObject()
            w.optional("address", p.address?.description)
            w.string("transport", p.isLE ? "LE" : "BR/EDR")
            w.optional("addressType", p.addressType.flatMap { t in p.address.map { t.describe($0) } })
            w.optional("name", p.name)
            w.int("connections", p.connections)
            w.optional("manufacturer", p.info.manufacturer)
            w.optional("model", p.info.model)
            w.optional("firmware", p.info.firmware)
            w.optional("software", p.info.software)
            w.optional("hardware", p.info.hardware)
            w.endObject()
        }
        w.endArray()
    }
}
