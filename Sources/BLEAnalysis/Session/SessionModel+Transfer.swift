import BLEProtocol

/// Application data per connection and direction (`Connection.transfer`): called by `att` for each
/// PDU that carries an attribute value, with the link parameters in force at that moment.
extension SessionModel {
    /// One value-carrying PDU: `value` bytes of application data in an ATT PDU of `attLength` bytes;
    /// `overhead` is the PDU's bytes besides the value (3, Prepare Write 5, Signed Write 15), for
    /// telling a value that fills ATT_MTU.
    @inline(__always)
    func transferPDU(_ c: Connection, _ kind: LinkBudget.Kind, value: Int, attLength: Int, overhead: Int, time: Int64, frame: Int, sent: Bool) {
        let full = c.att.mtuKnown && value == c.att.mtu - overhead
        var link = LinkInputs(intervalUnits: c.isLE ? c.link.intervalUnits : 0, latency: c.link.latency, octets: UInt16(LinkBudget.defaultOctets),
                              time: UInt16(LinkBudget.defaultTime), phy: 1, encrypted: c.encryption.encrypted, bufferCount: 0, bufferLength: 0)
        if let p = c.link.phy { link.phy = sent ? p.tx : p.rx }
        if let d = c.link.dataLength { link.octets = sent ? d.tx : d.rx }
        if let t = c.transfer.dataLengthTime { link.time = sent ? t.tx : t.rx }
        if sent, let buffers = c.isLE && (flow.leBuffers?.aclPackets ?? 0) > 0 ? flow.leBuffers : flow.aclBuffers {
            (link.bufferCount, link.bufferLength) = (buffers.aclPackets, buffers.aclLength)
        }
        if recordsActivity {   // the HTML report's throughput chart
            c.activity.record(time) { if sent { $0.valueBytesSent &+= value } else { $0.valueBytesReceived &+= value } }
        }
        if sent {
            c.transfer.sent.record(kind, value: value, attLength: attLength, full: full, time: time, frame: frame, link: link,
                                   mtu: c.att.mtu, mtuKnown: c.att.mtuKnown)
        } else {
            c.transfer.received.record(kind, value: value, attLength: attLength, full: full, time: time, frame: frame, link: link,
                                       mtu: c.att.mtu, mtuKnown: c.att.mtuKnown)
        }
    }

    /// A Write Request / Prepare Write Request (answered by its response or an Error Response) or an
    /// indication (by its confirmation) got its answer at `time`. `requestSentByHost`: who sent the request.
    @inline(__always)
    func transferAnswered(_ c: Connection, _ p: ATTBearer.Pending?, requestSentByHost: Bool, at time: Int64) {
        guard let p, p.opcode == .writeRequest || p.opcode == .prepareWriteRequest || p.opcode == .handleValueIndication else { return }
        let wait = time &- p.time   // safe: wrapping only on hostile timestamps (a statistic, clamped at 0)
        if requestSentByHost { c.transfer.sent.answered(after: wait) } else { c.transfer.received.answered(after: wait) }
    }
}
