// libFuzzer target `pc-config`: the RTCConfiguration subset the SDK and the agent bot take from
// the room server's /join answer (`pc_config`, a JSON object in a string), and what becomes of
// its ICE server URLs in webrtcbin (Sources/WebRTC/ICEServerURLs.swift, compiled in).
// Properties: round trips as in RoundTrip.swift; every decoded server has URLs and each is a
// stun:, stuns:, turn: or turns: URL with something after the scheme; the same text embedded as
// `pc_config` decodes to the same configuration; a TURN URL carries the credentials escaped so
// that they read back exactly and cannot end the user-info early.
import ECVProtocol
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPCConfig(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzData(data, size)
    let direct = roundTrip(PeerConnectionConfig.self, bytes)
    if let direct {
        check(direct)
        let text = String(decoding: bytes, as: UTF8.self)
        let join = #"{"result":"SUCCESS","params":{"room_id":"r","client_id":"c","is_initiator":"true","wss_url":"ws://h/ws","wss_post_url":"http://h","pc_config":"#
        var embedded = Data(join.utf8)
        embedded.append((try? ECVJSON.encode([text]))?.dropFirst().dropLast() ?? Data())
        embedded.append(Data("}}".utf8))
        guard let joined = roundTrip(JoinResponse.self, embedded) else { fatalError("a pc_config that decodes alone is refused in /join") }
        guard joined.params?.pcConfig == direct else { fatalError("pc_config embedded decodes differently") }
    }
    if let join = roundTrip(JoinResponse.self, bytes), let params = join.params { check(params.pcConfig) }
    if let server = roundTrip(ICEServer.self, bytes) { check(PeerConnectionConfig(iceServers: [server])) }
    return 0
}

private func check(_ config: PeerConnectionConfig) {
    for server in config.iceServers {
        guard !server.urls.isEmpty else { fatalError("an ICE server without URLs") }
        for url in server.urls {
            let stun = ICEServerURLs.stunServer(url)
            let turn = ICEServerURLs.isTURN(url)
            guard (stun != nil) != turn else { fatalError("\(url.debugDescription) is neither or both STUN and TURN") }
            guard url.split(separator: ":", maxSplits: 1).last.map({ !$0.isEmpty }) == true, url.contains(":") else {
                fatalError("\(url.debugDescription) has nothing after its scheme")
            }
            if let stun, !stun.hasPrefix("stun://") || stun.count < "stun://".count + 1 { fatalError("stun-server \(stun.debugDescription)") }
            if turn { checkTURN(url, server) }
        }
    }
}

private func checkTURN(_ url: String, _ server: ICEServer) {
    let mapped = ICEServerURLs.turnURL(url, username: server.username, credential: server.credential)
    let scheme = url.hasPrefix("turns:") ? "turns://" : "turn://"
    guard mapped.hasPrefix(scheme) else { fatalError("\(mapped.debugDescription) for \(url.debugDescription)") }
    let rest = mapped.dropFirst(scheme.count)
    guard let username = server.username else {
        guard rest == url.drop(while: { $0 != ":" }).dropFirst() else { fatalError("TURN URL changed: \(mapped.debugDescription)") }
        return
    }
    // user:password@ — the first '@' ends the user-info, the first ':' in it ends the user.
    guard let at = rest.firstIndex(of: "@") else { fatalError("no user-info in \(mapped.debugDescription)") }
    let userInfo = rest[..<at]
    let parts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
    guard parts.count == 2, !userInfo.dropFirst(parts[0].count + 1).contains(":"),
          parts[0].removingPercentEncoding == username,
          parts[1].removingPercentEncoding == (server.credential ?? "") else {
        fatalError("credentials do not read back from \(mapped.debugDescription)")
    }
    guard rest[rest.index(after: at)...] == url.drop(while: { $0 != ":" }).dropFirst() else { fatalError("host part changed") }
}
