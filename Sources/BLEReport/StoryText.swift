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
        case let .connected(role, peer, peerType, le):
            let who = peerType.map { "\(peer) (\($0.describe(peer)))" } ?? peer.description
            var text = role == .unknown ? "connected to \(who)" : "connected as \(role.rawValue) to \(who)"
            if let le { text += ", interval \(ms(le.interval)) ms, latency \(le.latency), timeout \(Int(le.timeout) * 10) ms" }
            return text
        case let .trafficWithoutSetUp(handle):
            return "traffic on handle \(handle) with no connection set-up in the capture"
        case let .sessionEnds(handle, why):
            return "a new session on handle \(handle) begins (\(why)): no HCI events for this link"
        case let .sessionBegins(handle, why):
            return "traffic on handle \(handle): a new session (\(why)), no connection set-up in the capture"
        case let .disconnected(reason, byHost):
            return "disconnected: \(coded(reason)), initiated by \(byHost ? "host" : "peer or controller")"
        case .closedByReset:
            return "closed by HCI Reset"
        case .handleReused:
            return "handle reused: no Disconnection Complete in the capture"
        case let .parameters(p):
            return "parameters: interval \(ms(p.interval)) ms, latency \(p.latency), timeout \(Int(p.timeout) * 10) ms"
        case let .connectionUpdateRefused(status):
            return "connection update refused by the controller: \(coded(status))"
        case let .connectionUpdateFailed(status):
            return "connection update failed: \(coded(status))"
        case let .dataLength(tx, rx):
            return "data length: TX \(tx) bytes, RX \(rx) bytes"
        case let .phy(tx, rx):
            return "PHY: TX \(HCINames.phy.name(UInt64(tx)) ?? "?"), RX \(HCINames.phy.name(UInt64(rx)) ?? "?")"
        case let .parametersRequested(byHost, intervalMin, intervalMax, latency, timeout):
            return "\(side(byHost)) asked for connection parameters: interval \(ms(intervalMin))–\(ms(intervalMax)) ms, latency \(latency), timeout \(Int(timeout) * 10) ms"
        case let .parameterUpdateRejected(byHost):
            return "connection parameter update rejected by \(side(byHost))"
        case let .channelClosed(byHost, cid):
            return "\(side(byHost)) closed L2CAP channel 0x\(Hex.pad(cid, 4))"
        case let .creditChannelRefused(result):
            return "credit-based channel refused (result 0x\(Hex.pad(result, 4)))"
        case let .creditChannelOpen(spsm, hostCID, peerCID, hostMTU, peerMTU, hostCredits, peerCredits):
            return "credit-based channel open: SPSM 0x\(Hex.pad(spsm, 4)), host CID 0x\(Hex.pad(hostCID, 4)) / peer CID 0x\(Hex.pad(peerCID, 4)), "
                + "MTU \(hostMTU)/\(peerMTU), credits \(hostCredits)/\(peerCredits)"
        case let .attOverBREDROpen(hostCID, peerCID):
            return "ATT over BR/EDR channel open: host CID 0x\(Hex.pad(hostCID, 4)) / peer CID 0x\(Hex.pad(peerCID, 4))"
        case let .pairingRequested(byHost, io, authReq, keySize):
            let auth = SMP.AuthReq.names.flagNames(UInt64(authReq.rawValue)).names
            return "pairing requested by \(side(byHost)): IO \(io), \(auth.isEmpty ? "no bonding, no MITM" : auth.joined(separator: ", ")), key size \(keySize)"
        case let .securityRequested(byHost):
            return "security requested by \(side(byHost))"
        case let .pairingMethod(sc, method, hostIO, peerIO, keySize, bonding):
            return "pairing method: \(sc ? "LE Secure Connections" : "LE legacy pairing"), \(method.rawValue) (IO \(hostIO) / \(peerIO)), "
                + "key size \(keySize), \(bonding ? "bonding" : "no bonding")"
        case let .pairingFailed(byHost, reason):
            return "pairing failed (sent by \(side(byHost))): \(reason)"
        case let .pairingTimedOut(after):
            return "pairing timed out: no SMP step for 30 s after the \(after.name) (Core v5.4 Vol 3 Part H 3.4)"
        case let .keyDistributed(key, byHost):
            return "key distributed: \(SMP.KeyDistribution.names.name(UInt64(key.rawValue)) ?? Hex.code(key.rawValue, 2)) from \(side(byHost))"
        case let .encryption(on, keySize):
            // Encryption Change v2's key size (7.7.8.1): 7–16 octets; Apple's controllers report 0 on
            // an encrypted link, which is "not reported", not a key of 0 octets.
            return "encryption \(on ? "on" : "off")" + (keySize.map { $0 == 0 ? ", key size not reported" : ", key size \($0)" } ?? "")
        case let .encryptionFailed(status):
            return "encryption failed: \(coded(status))"
        case let .keyRefreshFailed(status):
            return "encryption key refresh failed: \(status.name)"
        case let .simplePairingFailed(status):
            return "Secure Simple Pairing failed: \(coded(status))"
        case let .classicPairingMethod(method, hostIO, peerIO, mitm, bonding):
            return "pairing method: Secure Simple Pairing, \(method.rawValue) (IO \(hostIO) / \(peerIO)), "
                + "\(mitm ? method == .justWorks ? "MITM protection asked, impossible with these IO capabilities" : "MITM protection" : "no MITM protection"), "
                + "\(bonding ? "bonding" : "no bonding")"
        case let .storedLinkKey(found):
            return found ? "stored link key used (bonded)" : "no stored link key: pairing follows"
        case let .linkKey(type):
            return "link key: \(type)" + (type.isSecureConnections ? "" : " (no Secure Connections)")
        case let .classicEncryption(on, cipher, keySize):
            guard on else { return "encryption off" }
            let what = cipher.map { $0 == .e0 ? "E0 (no Secure Connections)" : "AES-CCM (Secure Connections)" } ?? "on"
            return "encryption on: \(what)" + (keySize.map { $0 == 0 ? ", key size not reported" : ", key size \($0)" } ?? "")
        case let .keySize(size, earlier):
            return "encryption key size \(size)" + (size < 16 ? " (\(Int(size) * 8) bits)" : "")
                + (earlier.map { ", smaller than the \($0) of an earlier connection to this peer" } ?? "")
        case .pairingDeclined:
            return "pairing declined: the host answered the user prompt with a negative reply"
        case let .authenticationFailed(status):
            return "authentication failed: \(coded(status))"
        case let .air(text):
            return "air: " + text
        case let .log(text):
            return "log: " + text
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
    static func side(_ byHost: Bool) -> String { byHost ? "host" : "peer" }
    /// `Connection Timeout (0x08)`.
    static func coded(_ status: HCIStatus) -> String { "\(status.name) (0x\(Hex.pad(status.rawValue, 2)))" }
    /// Connection interval units (1.25 ms) as `30.00`: exact, two decimals.
    static func ms(_ units: UInt16) -> String {
        let v = Int(units) * 125
        return "\(v / 100).\(v % 100 < 10 ? "0" : "")\(v % 100)"
    }

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
