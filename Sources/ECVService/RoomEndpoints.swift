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
        let party: CallParty?
        switch roomParty(roomId, request) {
        case .success(let granted): party = granted
        case .failure(let refusal): return refusal.response
        }
        switch core.rooms.join(roomId, as: party) {
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
        let party: CallParty?
        switch roomParty(segments[1], request) {
        case .success(let granted): party = granted
        case .failure(let refusal): return refusal.response
        }
        guard let result = core.rooms.post(message, room: segments[1], client: segments[2], as: party) else {
            return RoomRefusal.otherSlot.response
        }
        return .ecvJSON(RoomResponse(result: result))
    }

    func leave(_ segments: [String], _ request: HTTPServerRequest) async -> HTTPServerResponse {
        await core.script.applyDelay(.leave)
        guard segments.count == 3 else { return .ecvJSON(RoomResponse(result: .success)) }
        switch roomParty(segments[1], request) {
        case .success(let party): core.rooms.leave(segments[1], client: segments[2], as: party)
        case .failure(let refusal): return refusal.response
        }
        return .ecvJSON(RoomResponse(result: .success))
    }

    /// The slot a room request may act for (nil on a service without caller tokens), or why not.
    func roomParty(_ roomId: String, _ request: HTTPServerRequest) -> Result<CallParty?, RoomRefusal> {
        let access = core.engine.roomAccess(rtcId: roomId, token: callCredential(of: request))
        switch access {
        case .open: return .success(nil)
        case .granted(let party): return .success(party)
        case .missingCredential:
            core.log.record(.room, "request for room \(roomId) refused: no credential", rtcId: roomId)
            return .failure(.missingCredential)
        case .denied, .unknownCall, .notDialed:
            core.log.record(.room, "request for room \(roomId) refused: \(access)", rtcId: roomId)
            return .failure(.notAParty)
        }
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
            let party: CallParty?
            switch roomParty(roomId, request) {
            case .success(let granted): party = granted
            case .failure(let refusal): return refusal.response
            }
            switch core.rooms.colliderPost(message, room: roomId, client: clientId, as: party) {
            case .success?: return HTTPServerResponse(status: 200)
            case let other?: return .ecvJSON(RoomResponse(result: other), status: 404)
            case nil: return RoomRefusal.otherSlot.response
            }
        case "DELETE":
            switch roomParty(roomId, request) {
            case .success(let party): _ = core.rooms.colliderDelete(room: roomId, client: clientId, as: party)
            case .failure(let refusal): return refusal.response
            }
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

/// Why a room request may not act (docs/protocol.md §1.9).
enum RoomRefusal: Error {
    /// No credential: `401`.
    case missingCredential
    /// A credential that is not one of the call's parties, or a call the service does not know: `403`.
    case notAParty
    /// The client named in the path holds the other party's slot: `403`.
    case otherSlot

    var response: HTTPServerResponse {
        switch self {
        case .missingCredential:
            .ecvError(401, ServiceErrorResponse(code: .unauthorized, message: "room requests need the call's caller token "
                + "or its agent's session token (header \(ECVAPI.callTokenHeader) or query parameter \(ECVAPI.tokenQueryName))"))
        case .notAParty:
            .ecvError(403, ServiceErrorResponse(code: .forbidden, message: "the credential is not a party of a live call in this room"))
        case .otherSlot:
            .ecvError(403, ServiceErrorResponse(code: .forbidden, message: "that client holds the other party's slot"))
        }
    }
}
