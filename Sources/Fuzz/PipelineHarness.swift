import BLEAnalysis
import BLEBytes
import BLECapture
import BLEProtocol
import BLEReport

/// The whole analysis on a byte stream: the input is a compact list of records, written as a
/// capture file and analysed as `bleanalyze` does (detectors on, the `packets` display hook, every
/// renderer). Then the file is redacted and the redacted copy must give the same frame count and
/// the same findings.
///
/// Input: one byte choosing the container (`% 5`: btsnoop H4, btsnoop monitor, PacketLogger
/// little-endian, PacketLogger big-endian, pcapng link type 201 with µs or, bit 3, ns resolution),
/// then per record: `kind` (bits 0–3: command, event, ACL, SCO, ISO, user logging, event, ACL,
/// new index, index info, system note, control command, control event, syslog, note, vendor;
/// bits 4–5: adapter; bit 6: cut by the capture; bit 7: received), `dt` (time step: < 128 → that
/// many ms, 128…254 → that many seconds past 127, 255 → the next 8 bytes are the timestamp itself,
/// little-endian), `length` (u16, little-endian), then the packet bytes.
enum PipelineHarness {
    static let path = Scratch.path("pipeline.capture")
    static let redactedPath = Scratch.path("pipeline-redacted.capture")

    static let kinds: [FrameKind] = [.command, .event, .aclData, .scoData, .isoData, .userLogging, .event, .aclData,
                                     .indexNew, .indexInfo, .systemNote, .controlCommand, .controlEvent, .syslog, .note, .vendor]

    enum Container: UInt8, CaseIterable { case btsnoopH4, btsnoopMonitor, packetLoggerLE, packetLoggerBE, pcapng }

    /// Decodes the compact record stream (shared with the seed generator's encoder).
    static func records(_ data: UnsafeRawBufferPointer) -> (Container, UInt8, [RecordToWrite]) {
        var input = InputCursor(data)
        let selector = input.u8()
        let container = Container(rawValue: selector % 5) ?? .btsnoopH4
        var out: [RecordToWrite] = []
        var time: Int64 = 1_700_000_000_000_000
        while !input.isAtEnd {
            let kindByte = input.u8()
            let dt = Int64(input.u8())
            if dt == 255 {
                // A wild timestamp (any Int64: btsnoop and pcapng can carry anything).
                var v: UInt64 = 0
                for i in 0 ..< 8 { v |= UInt64(input.u8()) << UInt64(8 * i) }
                time = Int64(bitPattern: v)
            } else {
                time &+= dt < 128 ? dt * 1_000 : (dt - 127) * 1_000_000   // safe: wraps only after a wild timestamp
            }
            let length = Int(input.u16())
            let bytes = Array(input.bytes(length))
            let kind = kinds[Int(kindByte & 0x0F)]
            let received = kindByte & 0x80 != 0 || kind == .event
            out.append(RecordToWrite(timestamp: time, direction: kind == .command ? .sent : received ? .received : .sent,
                                     kind: kind, adapter: UInt16(kindByte >> 4 & 3), payload: bytes,
                                     originalLength: kindByte & 0x40 != 0 ? bytes.count + 3 : nil))
        }
        return (container, selector, out)
    }

    /// The capture file for the records.
    static func file(_ container: Container, selector: UInt8, _ records: [RecordToWrite]) -> [UInt8] {
        switch container {
        case .btsnoopH4, .btsnoopMonitor:
            var w = BTSnoopWriter(datalink: container == .btsnoopH4 ? Datalink.btsnoopH4 : Datalink.btsnoopMonitor)
            for r in records { w.append(r) }
            return w.bytes
        case .packetLoggerLE, .packetLoggerBE:
            var w = PacketLoggerWriter(bigEndian: container == .packetLoggerBE)
            for r in records { w.append(r) }
            return w.bytes
        case .pcapng:
            var w = PcapngWriter(linkType: UInt16(Datalink.pcapH4WithPHDR), tsresol: selector & 8 != 0 ? 9 : 6)
            for r in records {
                let indicator: UInt8 = switch r.kind { case .command: 1; case .aclData: 2; case .scoData: 3; case .event: 4; case .isoData: 5; default: 0xFF }
                let data = [0, 0, 0, r.direction == .received ? 1 : 0, indicator] + r.payload
                w.append(micros: r.timestamp, data: data, originalLength: r.originalLength.map { $0 + 5 })
            }
            return w.bytes
        }
    }

    /// Encodes records in the harness's input format (for seeds made from captures).
    static func encode(_ records: [RecordToWrite], container: Container = .btsnoopH4) -> [UInt8] {
        var out: [UInt8] = [container.rawValue]
        var last: Int64? = nil
        for r in records {
            guard let kind = kinds.firstIndex(of: r.kind) else { continue }
            let payload = r.payload.prefix(0xFFFF)
            let delta = max(0, r.timestamp - (last ?? r.timestamp))
            last = r.timestamp
            let ms = delta / 1_000
            let dt: UInt8 = ms < 128 ? UInt8(ms) : UInt8(min(254, 127 + delta / 1_000_000))
            let cut: UInt8 = (r.originalLength ?? payload.count) > payload.count ? 0x40 : 0
            out += [UInt8(kind) | UInt8(r.adapter & 3) << 4 | cut | (r.direction == .received ? 0x80 : 0), dt,
                    UInt8(payload.count & 0xFF), UInt8(payload.count >> 8)]
            out += payload
        }
        return out
    }

    static func run(_ data: UnsafeRawBufferPointer, _ check: inout Invariants) {
        let (container, selector, records) = records(data)
        guard Scratch.write(file(container, selector: selector, records), to: path) else { return }
        defer { Scratch.remove(path) }
        guard let file = try? CaptureFile(path: path) else {
            // A PacketLogger file must start with a plausible record to be recognised; the others always are.
            check.expect(container == .packetLoggerLE || container == .packetLoggerBE || records.isEmpty,
                         "a \(container) file written by our writer is not readable")
            return
        }
        let analyzer = Analyzer(detect: true)
        defer { analyzer.session.engine = nil }   // the engine ↔ model cycle (see CaptureHarness)
        var upper: [Layer] = []
        let text = PacketText(options: RenderOptions())
        let json = PacketJSON(options: RenderOptions(showKeys: true))
        var rendered = 0
        let summary = file.read { frame in
            upper.removeAll(keepingCapacity: true)
            let analyzed = analyzer.consume(frame) { pdu in pdu.displayLayers(into: &upper) }
            let layers = (frame.kind == .airLE ? analyzed.airLayers() : FrameLayers.decode(frame)) + upper
            var s = ""
            text.render(frame, layers: layers, status: analyzed.status, into: &s)
            rendered &+= s.utf8.count &+ json.render(frame, layers: layers, status: analyzed.status).utf8.count
        }
        let findings = analyzer.finish()
        let facts = CaptureFacts(path: path, info: file.info, summary: summary, analyzer: analyzer)
        let model = analyzer.session
        rendered &+= ReportText.render(facts, model: model, findings: findings).utf8.count
        rendered &+= ReportJSON.render(facts, model: model, findings: findings).utf8.count
        rendered &+= InfoRenderer.json(facts).utf8.count &+ InfoRenderer.text(facts).utf8.count
        rendered &+= SessionText.timeline(model).utf8.count &+ SessionJSON.timeline(model).utf8.count
        rendered &+= SessionText.gatt(model).utf8.count &+ SessionJSON.gatt(model).utf8.count
        rendered &+= SessionText.advertisers(model).utf8.count &+ SessionJSON.advertisers(model).utf8.count
        _ = rendered
        for f in findings {
            check.expect(f.frames.allSatisfy { $0 >= 1 && $0 <= summary.frames }, "\(f.rule) cites frames \(f.frames) outside 1…\(summary.frames)")
        }
        RedactionCheck.run(path: path, redactedPath: redactedPath, frames: summary.frames, findings: findings, &check)
    }
}
