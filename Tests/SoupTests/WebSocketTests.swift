import Foundation
import GLibCore
import MediaTestSupport
import Soup
import Synchronization
import Testing

/// Hands the server side of accepted WebSockets (with their upgrade requests) to the test.
final class AcceptedSockets: Sendable {
    let stream: AsyncStream<(WebSocketConnection, HTTPServerRequest)>
    private let continuation: AsyncStream<(WebSocketConnection, HTTPServerRequest)>.Continuation

    init() { (stream, continuation) = AsyncStream.makeStream() }

    func install(on server: HTTPServer, path: String = "/ws", protocols: [String] = []) {
        let continuation = continuation
        server.webSocket(path: path, protocols: protocols) { connection, request in continuation.yield((connection, request)) }
    }

    func next() async throws -> (WebSocketConnection, HTTPServerRequest) {
        let stream = stream
        return try await within(10, "server accepting a WebSocket") {
            for await accepted in stream { return accepted }
            throw TimedOut(what: "accept stream ended")
        }
    }
}

extension SoupTests {
    @Suite("WebSocket client and server") struct WebSocketTests {
        @Test func thousandMessagesEachWayArriveInOrder() async throws {
            let accepted = AcceptedSockets()
            try await withServer({ accepted.install(on: $0) }) { _, base in
                let url = base.replacingOccurrences(of: "http://", with: "ws://") + "/ws"
                let client = try await WebSocketClient.connect(url: url)
                let (server, _) = try await accepted.next()
                #expect(client.state == .open)
                #expect(server.side == .server)

                for index in 0..<500 {
                    try client.send(text: "c\(index)")
                    try client.send(data: [UInt8(index & 0xff), UInt8(index >> 8)])
                    try server.send(text: "s\(index)")
                    try server.send(data: Array("S\(index)".utf8))
                }
                let atServer = try await collect(server.events, count: 1000)
                let atClient = try await collect(client.events, count: 1000)
                let expectedAtServer: [WebSocketEvent] = (0..<500).flatMap {
                    [.text("c\($0)"), .binary([UInt8($0 & 0xff), UInt8($0 >> 8)])]
                }
                let expectedAtClient: [WebSocketEvent] = (0..<500).flatMap { [.text("s\($0)"), .binary(Array("S\($0)".utf8))] }
                #expect(atServer == expectedAtServer)
                #expect(atClient == expectedAtClient)
                try client.close()
            }
        }

        @Test func handshakeHeadersQueryAndSubprotocolReachTheServer() async throws {
            let accepted = AcceptedSockets()
            try await withServer({ accepted.install(on: $0, protocols: ["ecv-signaling"]) }) { _, base in
                let url = base.replacingOccurrences(of: "http://", with: "ws://") + "/ws/room?client=c1"
                let client = try await WebSocketClient.connect(url: url, headers: ["X-WebRTC-Auth": "webrtc_token"],
                                                               origin: "https://app.example", protocols: ["ecv-signaling"])
                let (_, request) = try await accepted.next()
                #expect(request.headers["X-WebRTC-Auth"] == "webrtc_token")
                #expect(request.headers["Origin"] == "https://app.example")
                #expect(request.queryValue("client") == "c1")
                #expect(request.path == "/ws/room")
                #expect(client.subprotocol == "ecv-signaling")
                try client.close()
            }
        }

        @Test func upgradeToAnHTTPOnlyPathIsRejectedWithItsStatus() async throws {
            try await withServer({ $0.route("GET", "/plain") { _ in .text("no sockets here") } }) { _, base in
                let url = base.replacingOccurrences(of: "http://", with: "ws://") + "/plain"
                do throws(HTTPError) {
                    _ = try await WebSocketClient.connect(url: url)
                    Issue.record("upgrade accepted by a plain route")
                } catch {
                    guard case .webSocketRejected(let rejected, let status, _) = error else { Issue.record("wrong error \(error)"); return }
                    #expect(rejected == url)
                    #expect(status == 200)
                }
            }
        }

        @Test func serverCloseIsSeenOnceByTheClient() async throws {
            let accepted = AcceptedSockets()
            try await withServer({ accepted.install(on: $0) }) { _, base in
                let client = try await WebSocketClient.connect(url: base.replacingOccurrences(of: "http://", with: "ws://") + "/ws")
                let (server, _) = try await accepted.next()
                try server.send(text: "bye soon")
                try server.close(code: 4001, reason: "agent hung up")
                let events = try await collect(client.events)
                #expect(events == [.text("bye soon"), .closed(code: 4001, reason: "agent hung up")])
                #expect(client.state == .closed)
                let serverEvents = try await collect(server.events)
                #expect(serverEvents.filter { if case .closed = $0 { true } else { false } }.count == 1)
                #expect(server.state == .closed)
            }
        }

        @Test func clientCloseIsSeenByTheServerAndSendingAfterCloseThrows() async throws {
            let accepted = AcceptedSockets()
            try await withServer({ accepted.install(on: $0) }) { _, base in
                let url = base.replacingOccurrences(of: "http://", with: "ws://") + "/ws"
                let client = try await WebSocketClient.connect(url: url)
                let (server, _) = try await accepted.next()
                try client.close(code: 1000, reason: "done")
                #expect(client.state != .open)
                #expect(throws: WebSocketError.notOpen(url: url, state: client.state)) { try client.send(text: "too late") }
                let serverEvents = try await collect(server.events)
                #expect(serverEvents == [.closed(code: 1000, reason: "done")])
                let clientEvents = try await collect(client.events)
                #expect(clientEvents.count == 1)
                guard case .closed = clientEvents.last else { Issue.record("client stream did not end with .closed"); return }
                #expect(client.state == .closed)
                #expect(throws: WebSocketError.self) { try client.send(data: [1, 2, 3]) }
                #expect(throws: WebSocketError.self) { try server.send(text: "also too late") }
                try client.close() // closing again is harmless
            }
        }

        @Test func abruptServerStopEndsTheClientStream() async throws {
            let accepted = AcceptedSockets()
            let (server, base) = try await startServer { accepted.install(on: $0) }
            let client = try await WebSocketClient.connect(url: base.replacingOccurrences(of: "http://", with: "ws://") + "/ws")
            let (serverSide, _) = try await accepted.next()
            try client.send(text: "hello")
            let first = try await collect(serverSide.events, count: 1)
            #expect(first == [.text("hello")])
            await server.stop()
            let events = try await collect(client.events)
            let closes = events.filter { if case .closed = $0 { true } else { false } }
            #expect(closes == [.closed(code: 1006, reason: "")])
            #expect(client.state == .closed)
            let serverEvents = try await collect(serverSide.events)
            guard case .closed = serverEvents.last else { Issue.record("server side did not report .closed"); return }
            #expect(throws: WebSocketError.self) { try client.send(text: "into the void") }
        }

        @Test func keepaliveAndLargeMessages() async throws {
            let accepted = AcceptedSockets()
            try await withServer({ accepted.install(on: $0) }) { _, base in
                let client = try await WebSocketClient.connect(url: base.replacingOccurrences(of: "http://", with: "ws://") + "/ws",
                                                               options: .init(keepaliveInterval: .seconds(15)))
                let (server, _) = try await accepted.next()
                #expect(await client.keepaliveInterval == .seconds(15))
                #expect(await server.keepaliveInterval == .zero)
                server.setKeepaliveInterval(.milliseconds(1500)) // whole seconds, rounded up
                #expect(await server.keepaliveInterval == .seconds(2))
                // Well past libsoup's own 128 KiB default limit for incoming messages.
                let big = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
                try client.send(data: big)
                try server.send(text: String(repeating: "é", count: 300_000))
                #expect(try await collect(server.events, count: 1) == [.binary(big)])
                #expect(try await collect(client.events, count: 1) == [.text(String(repeating: "é", count: 300_000))])
                try client.close()
            }
        }

        /// A close from one thread while another sends: every send that did not throw is written
        /// before the close frame (none is accepted and then found closing, neither written nor
        /// reported), so the peer receives exactly the accepted texts, in order. The collider
        /// relies on this when a script or a shutdown closes a socket it is delivering on.
        @Test func sendsAcceptedBeforeACloseFromAnotherThreadAllArriveBeforeIt() async throws {
            let accepted = AcceptedSockets()
            try await withServer({ accepted.install(on: $0) }) { _, base in
                let url = base.replacingOccurrences(of: "http://", with: "ws://") + "/ws"
                for round in 0..<100 {
                    let client = try await WebSocketClient.connect(url: url)
                    let (server, _) = try await accepted.next()
                    let sent = Locked(0)
                    let sender = Task.detached { () -> [String] in
                        var texts: [String] = []
                        // Until the close makes a send throw (the bound only guards a close that never comes).
                        while texts.count < 100_000 {
                            let text = "\(round)-\(texts.count)"
                            do { try server.send(text: text) } catch { break }
                            texts.append(text)
                            sent.withLock { $0 = texts.count }
                        }
                        return texts
                    }
                    // The close lands somewhere in the first few dozen sends, on another thread.
                    let closeAfter = Int.random(in: 1...40)
                    let closer = Task.detached {
                        while sent.value < closeAfter { await Task.yield() }
                        try server.close(code: 4000, reason: "closed while sending")
                    }
                    let texts = await sender.value
                    try await closer.value
                    let events = try await collect(client.events)
                    let received = events.compactMap { if case .text(let text) = $0 { text } else { nil } }
                    #expect(received == texts, "round \(round): \(texts.count) accepted")
                    #expect(events.last == .closed(code: 4000, reason: "closed while sending"))
                    #expect(await server.unsentTexts() == [], "a local close leaves nothing unwritten")
                }
            }
        }

        @Test func invalidCloseCodesAreRejected() async throws {
            let accepted = AcceptedSockets()
            try await withServer({ accepted.install(on: $0) }) { _, base in
                let client = try await WebSocketClient.connect(url: base.replacingOccurrences(of: "http://", with: "ws://") + "/ws")
                #expect(throws: WebSocketError.invalidCloseCode(1006)) { try client.close(code: 1006) }
                #expect(throws: WebSocketError.closeReasonTooLong(bytes: 200)) {
                    try client.close(reason: String(repeating: "x", count: 200))
                }
                #expect(client.state == .open)
                try client.close()
            }
        }
    }
}
