import BLECapture
import BLEProtocol

/// The per-access-address link tracker: a link opens on CONNECT_IND (or on traffic the capture began
/// in the middle of), ends on LL_TERMINATE_IND or is found lost, and tells its radio facts once.
extension AirCaptureAdapter {
    /// A new link for access address `aa`, with the next free handle (nil past `maxLinks`).
    func openLink(_ aa: UInt32, _ frame: Frame) -> Int? {
        guard links.count < Self.maxLinks else { return nil }
        let handle = nextHandle
        // Connection handles are 0x0000–0x0EFF (Core v5.4 Vol 4 Part E 5.4.2).
        nextHandle = nextHandle >= 0x0EFF ? 1 : nextHandle + 1
        links.append(Link(accessAddress: aa, handle: handle, firstFrame: frame.number, lastFrame: frame.number, lastTime: frame.timestamp))
        live[aa] = links.count - 1
        sightings[aa] = nil
        return links.count - 1
    }

    /// Ends link `j` as lost: a disconnection with Connection Timeout (0x08) at its last packet,
    /// marked as inferred so the report says how it is known.
    func lose(_ j: Int, _ analyzer: Analyzer, _ frame: Frame, why: String) {
        let handle = links[j].handle
        for side in 0 ... 1 { closeBurst(j, side, analyzer.session, lost: true) }
        summarize(j, analyzer.session, time: frame.timestamp, frame: frame.number, ending: "lost: " + why)
        if let c = analyzer.session.live[LinkKey(adapter: frame.adapter, handle: handle)] {
            c.snifferLoss.lossInferred = "no LL_TERMINATE_IND; " + why
        }
        var unused = FrameStatus.ok
        disconnected(handle, reason: .connectionTimeout, frame, analyzer, &unused)
        end(j)
    }

    /// Link `i` is over: later packets on its access address open a new one.
    func end(_ i: Int) {
        links[i].terminated = true
        live[links[i].accessAddress] = nil
    }

    /// Tells the link's connection the last frame where the sniffer lost packets (detectors do not call
    /// a request unanswered when its response may be among them).
    func syncLoss(_ i: Int, _ session: SessionModel, adapter: UInt16) {
        guard links[i].lastLossFrame > 0, let c = session.live[LinkKey(adapter: adapter, handle: links[i].handle)] else { return }
        c.snifferLoss.captureLossFrame = links[i].lastLossFrame
        if c.snifferLoss.firstCaptureLossFrame == 0 { c.snifferLoss.firstCaptureLossFrame = links[i].lastLossFrame }
    }

    /// Ends side `side`'s run of copies of one PDU on link `i`: a long one goes to the detectors.
    func closeBurst(_ i: Int, _ side: Int, _ session: SessionModel, lost: Bool) {
        guard var r = links[i].run[side] else { return }
        links[i].run[side] = nil
        guard r.copies >= AirRetransmissionBurst.reported, let c = session.live[LinkKey(adapter: 0, handle: links[i].handle)] else { return }
        r.lost = lost
        session.emit(.link, .airRetransmissionBurst(c, r))
    }

    /// The radio facts of a link, once, on its timeline.
    func summarize(_ i: Int, _ session: SessionModel, time: Int64, frame: Int, ending: String) {
        guard let c = session.live[LinkKey(adapter: 0, handle: links[i].handle)] else { return }
        c.note(time, frame, .signaling, .air(links[i].summary + "; " + ending))
    }

    func note(_ i: Int, _ session: SessionModel, _ frame: Frame, _ kind: TimelineEvent.Kind, _ fact: StoryFact) {
        session.live[LinkKey(adapter: frame.adapter, handle: links[i].handle)]?.note(frame.timestamp, frame.number, kind, fact)
    }
}
