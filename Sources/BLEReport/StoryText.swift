import BLEAnalysis
import BLEBytes
import BLEProtocol

/// The sentence of each line of a connection's story (`StoryFact`), for every renderer: the text
/// report, `timeline` (text and JSON's `text`), the HTML. Worded here and nowhere else.
public enum StoryText {
    public static func sentence(_ fact: StoryFact) -> String {
        switch fact {
        case let .said(text):
            return text
        case let .mtuExchanged(client, server, effective):
            return "MTU exchanged: client \(client.map(String.init) ?? "?"), server \(server), ATT_MTU \(effective)"
        case let .requestFailed(request, error, attribute):
            return "\(request.name) failed: \(error)" + (attribute.map { " on " + $0 } ?? "")
        case let .subscriptionFailed(characteristic, error):
            return "subscription to \(characteristic) failed: \(error)"
        case let .subscriptionAccepted(byPeer, value, characteristic):
            let what = value == 0 ? "unsubscribed from" : value & 2 != 0 ? "subscribed (indications) to" : "subscribed (notifications) to"
            return "\(byPeer ? "peer" : "host") \(what) \(characteristic)"
        case let .cccdWrittenByCommand(value, characteristic):
            return "CCCD 0x\(Hex.pad(value, 4)) written (command) to \(characteristic)"
        case let .cachedSubscription(byPeer, value, valueHandle, cccd):
            return "\(byPeer ? "peer" : "host") subscribed (\(value == 2 ? "indications" : "notifications")) to handle "
                + "0x\(Hex.pad(valueHandle, 4)) by writing 0x\(Hex.pad(value, 4)) to 0x\(Hex.pad(cccd, 4)) (handles cached: no discovery here)"
        case let .discovery(services, characteristics, descriptors):
            return discovery(services, characteristics, descriptors)
        case let .firstValue(indication, sent, attribute, length):
            return "first \(indication ? "indication" : "notification") \(sent ? "sent" : "received"): \(attribute) (\(count(length, "byte")))"
        case let .longRead(attribute, bytes, requests):
            return "long read of \(attribute): \(bytes) bytes in \(requests) requests (Read + Read Blob)"
        case let .longWrite(attribute, bytes, requests):
            return "long write of \(bytes) bytes to \(attribute) (\(requests) Prepare Write + Execute Write)"
        }
    }

    static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }

    /// `discovery: 5 services, 26 characteristics, 35 descriptors`.
    static func discovery(_ services: Int, _ characteristics: Int, _ descriptors: Int) -> String {
        var text = "discovery: "
        if services > 0 || characteristics == 0 { text += count(services, "service") + ", " }
        text += count(characteristics, "characteristic") + ", " + count(descriptors, "descriptor")
        // Characteristics found within services the client did not discover here: it knew them
        // from an earlier connection (cached), not a discovery that found nothing.
        if services == 0, characteristics > 0 { text += " (no service discovery on this connection: the client knew the services)" }
        return text
    }
}

extension TimelineEvent {
    /// The line's sentence (`StoryText`).
    public var text: String { StoryText.sentence(fact) }
}
