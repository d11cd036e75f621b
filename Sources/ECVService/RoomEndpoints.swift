import ECVProtocol
import Foundation
import Soup

/// The AppRTC room server's HTTP side (docs/protocol.md §2.1–§2.3, §2.5) and the browser page
/// (§5.1). Room answers are always HTTP 200 with a `result`.
extension ServiceRouter {
    func join(_ segments: [String], _ request: HTTPServerRequest) async -> HTTPServerResponse {
        await core.script.applyDelay(.join)
        guard segments.count == 2 else { return .ecvJSON(JoinResponse(result: .invalidRequest)) }
        let roomId = segments[1]
        switch core.rooms.join(roomId) {
        case .invalidRoom:
            return .ecvJSON(JoinResponse(result: .invalidRequest))
        case .full:
            return .ecvJSON(JoinResponse(result: .full))
        case .joined(let clientId, let isInitiator, let messages):
            let base = advertisedBase(for: request)
            let iceServers = core.script.omitsICEServers ? [] : core.configuration.iceServers
            let params = JoinParameters(
                roomId: roomId, clientId: clientId, isInitiator: isInitiator, messages: messages,
                wssUrl: ECVAPI.webSocketBase(base) + ECVAPI.signalingSocket, wssPostUrl: base,
                pcConfig: PeerConnectionConfig(iceServers: iceServers, bundlePolicy: "max-bundle", rtcpMuxPolicy: "require"),
                roomLink: base + ECVAPI.browserRoomPath(room: roomId))
            return .ecvJSON(JoinResponse(result: .success, params: params))
        }
    }

    func message(_ segments: [String], _ request: HTTPServerRequest) async -> HTTPServerResponse {
        await core.script.applyDelay(.message)
        guard segments.count == 3 else { return .ecvJSON(RoomResponse(result: .invalidRequest)) }
        let message: SignalingMessage
        do {
            message = try ECVJSON.decode(SignalingMessage.self, from: Data(request.body))
        } catch {
            core.log.record(.room, "message to room \(segments[1]) refused: \(error)", rtcId: segments[1])
            return .ecvJSON(RoomResponse(result: .invalidRequest))
        }
        return .ecvJSON(RoomResponse(result: core.rooms.post(message, room: segments[1], client: segments[2])))
    }

    func leave(_ segments: [String], _ request: HTTPServerRequest) async -> HTTPServerResponse {
        await core.script.applyDelay(.leave)
        if segments.count == 3 { core.rooms.leave(segments[1], client: segments[2]) }
        return .ecvJSON(RoomResponse(result: .success))
    }

    /// `POST <wss_post_url>/<room>/<client>` relays a payload as if sent on that client's socket;
    /// `DELETE` unregisters and closes the socket.
    func colliderHTTP(room roomId: String, client clientId: String, _ request: HTTPServerRequest) async -> HTTPServerResponse {
        await core.script.applyDelay(.colliderPost)
        switch request.method.uppercased() {
        case "POST":
            let message: SignalingMessage
            do {
                message = try ECVJSON.decode(SignalingMessage.self, from: Data(request.body))
            } catch {
                return .ecvJSON(RoomResponse(result: .invalidRequest), status: 400)
            }
            switch core.rooms.colliderPost(message, room: roomId, client: clientId) {
            case .success: return HTTPServerResponse(status: 200)
            case let other: return .ecvJSON(RoomResponse(result: other), status: 404)
            }
        case "DELETE":
            _ = core.rooms.colliderDelete(room: roomId, client: clientId)
            return HTTPServerResponse(status: 200)
        default:
            return .ecvError(405, ServiceErrorResponse(code: "METHOD_NOT_ALLOWED",
                                                       message: "the collider takes POST or DELETE, not \(request.method)"),
                             headers: ["Allow": "POST, DELETE"])
        }
    }

    func browserPage(room roomId: String, _ request: HTTPServerRequest) async -> HTTPServerResponse {
        await core.script.applyDelay(.browserPage)
        guard ECVAPI.isValidRtcId(roomId) else {
            return .ecvError(404, ServiceErrorResponse(code: "NOT_FOUND", message: "\"\(roomId)\" is not a room name"))
        }
        let base = advertisedBase(for: request)
        let page = BrowserPage(roomId: roomId, baseURL: base,
                               signalingURL: ECVAPI.webSocketBase(base) + ECVAPI.signalingSocket)
        return HTTPServerResponse(status: 200, headers: ["Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"],
                                  body: Array(page.html.utf8))
    }
}
