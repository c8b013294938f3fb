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
        let phy = c.phy.map { sent ? $0.tx : $0.rx } ?? 1
        let octets = c.dataLength.map { Int(sent ? $0.tx : $0.rx) } ?? LinkBudget.defaultOctets
        let llTime = c.transfer.dataLengthTime.map { Int(sent ? $0.tx : $0.rx) } ?? LinkBudget.defaultTime
        var count = 0, length = 0
        if sent, let buffers = c.isLE && (flow.leBuffers?.aclPackets ?? 0) > 0 ? flow.leBuffers : flow.aclBuffers {
            (count, length) = (Int(buffers.aclPackets), Int(buffers.aclLength))
        }
        let link = LinkBudget(intervalUnits: c.isLE ? c.intervalUnits : 0, latency: c.latency, octets: octets, time: llTime, phy: phy,
                              encrypted: c.encrypted, bufferCount: count, bufferLength: length)
        if sent {
            c.transfer.sent.mtu = c.att.mtu
            c.transfer.sent.mtuKnown = c.att.mtuKnown
            c.transfer.sent.record(kind, value: value, attLength: attLength, full: full, time: time, frame: frame, link: link)
        } else {
            c.transfer.received.mtu = c.att.mtu
            c.transfer.received.mtuKnown = c.att.mtuKnown
            c.transfer.received.record(kind, value: value, attLength: attLength, full: full, time: time, frame: frame, link: link)
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
