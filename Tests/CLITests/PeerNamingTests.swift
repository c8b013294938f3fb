import Foundation
import TestSupport
import Testing

/// The report, `timeline` and `gatt` name every peer alike (issue 26): names learnt after a
/// connection opened (advertising heard later, the GAP Device Name read during discovery) are
/// resolved by the model when the pass ends, whichever command ran it. Over every real capture and
/// the project's own: each connection of `timeline --json` carries the report's `peer` and
/// `peerName`, and each server of `gatt --json` lists the connections that used it and their peer's
/// name as the report gives it; the text of `gatt` heads the table with that name.
@Suite struct PeerNamingTests {
    static var corpus: Bool { CLI.sharedReal != nil }

    struct Named: Equatable, CustomStringConvertible {
        var peer: String?, peerName: String?
        var description: String { "\(peerName ?? "-") (\(peer ?? "-"))" }
    }

    static func named(_ connections: Any?) -> [Int: Named] {
        var out: [Int: Named] = [:]
        for c in connections as? [[String: Any]] ?? [] {
            guard let i = c["index"] as? Int else { continue }
            out[i] = Named(peer: c["peer"] as? String, peerName: c["peerName"] as? String)
        }
        return out
    }

    @Test(.enabled(if: corpus, "needs ../shared/captures/real"))
    func reportTimelineAndGattNameEveryPeerAlike() throws {
        var connections = 0, namedServers = 0
        for file in try CLI.allCaptures() {
            let name = URL(fileURLWithPath: file).lastPathComponent
            let report = try CLI.run([file, "--json"]), timeline = try CLI.run(["timeline", file, "--json"])
            let gatt = try CLI.run(["gatt", file, "--json"]), gattText = try CLI.run(["gatt", file])
            // A capture with nothing to decode exits 2 in every command alike.
            guard report.status != 2 else {
                #expect(timeline.status == 2 && gatt.status == 2, "\(name)")
                continue
            }
            let byReport = Self.named(try CLI.json(report.stdout)["connections"])
            let byTimeline = Self.named(try CLI.json(timeline.stdout)["connections"])
            #expect(byTimeline == byReport, "\(name): timeline \(byTimeline) vs report \(byReport)")
            connections += byReport.count
            for server in try CLI.json(gatt.stdout)["servers"] as? [[String: Any]] ?? [] {
                let owner = server["owner"] as? String ?? ""
                let used = server["connections"] as? [Int] ?? []
                let names = Set(used.compactMap { byReport[$0]?.peerName })
                let peerName = server["peerName"] as? String
                if names.count == 1 {
                    #expect(peerName == names.first, "\(name): server \(owner) named \(peerName ?? "nil"), its connections \(names)")
                } else {
                    #expect(peerName == nil, "\(name): server \(owner) named \(peerName ?? "nil") though its connections say \(names)")
                }
                for i in used {
                    let peer = try #require(byReport[i], "\(name): server \(owner) lists connection \(i) the report does not have")
                    if let address = peer.peer, !owner.hasPrefix("local") { #expect(owner.hasPrefix(address), "\(name): \(owner) vs \(address)") }
                }
                if let peerName {
                    namedServers += 1
                    #expect(gattText.stdout.contains("GATT server \(peerName) ("), "\(name): gatt text does not name \(peerName)")
                }
            }
        }
        // The corpus has peers named only after connecting (the GAP Device Name, advertising heard later).
        #expect(connections > 100)
        #expect(namedServers > 10)
    }
}
