import Foundation
import MediaTestSupport
import Soup
import Testing

extension SoupTests {
    /// Issue #34: a WebSocket peer that never reads made libsoup's unbounded outgoing queue grow
    /// by whatever was sent to it (+187 MiB in 5 s). The queue is bounded in bytes now.
    @Suite("WebSocket outgoing backlog") struct WebSocketBacklogTests {
        @Test func aPeerThatNeverReadsIsClosedWith1008AndParksNoMemory() async throws {
            let accepted = AcceptedSockets()
            let limit = 1 << 20
            let server = HTTPServer(maxOutgoingWebSocketBytes: limit)
            accepted.install(on: server)
            let port = try await server.listen()
            // A client that completes the upgrade, then never reads again.
            let raw = try RawConnection(port: port)
            raw.send("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            let (socket, _) = try await accepted.next()
            let before = residentMemoryBytes()
            let offer = String(repeating: "o", count: 60_000)
            var sent = 0
            do {
                // 3,000 × 60 kB, as in the issue: 180 MB would have waited in libsoup's queue.
                for _ in 0..<3000 {
                    try socket.send(text: offer)
                    sent += 1
                    if sent % 50 == 0 { try await Task.sleep(for: .milliseconds(1)) } // let the loop write
                }
            } catch {}
            let events = try await collect(socket.events, seconds: 15)
            let growth = residentMemoryBytes() - before
            #expect(sent < 3000, "sending should fail once the socket closed")
            #expect(events.contains { if case .error(let text) = $0 { text.hasPrefix("outgoing backlog") } else { false } }, "\(events)")
            guard case .closed = events.last else { Issue.record("no close: \(events)"); return }
            #expect(socket.state == .closed)
            #expect(growth < 32 << 20, "RSS grew by \(growth >> 20) MiB")
            print("backlog: \(sent) frames of 60 kB accepted before the close; RSS +\(growth >> 20) MiB")
            await server.stop()
        }

        @Test func aReaderThatKeepsUpIsNeverCut() async throws {
            let accepted = AcceptedSockets()
            try await withServer({ accepted.install(on: $0) }) { _, base in
                let client = try await WebSocketClient.connect(url: base.replacingOccurrences(of: "http://", with: "ws://") + "/ws")
                let (server, _) = try await accepted.next()
                // 20 MB through a socket whose bound is 4 MiB: the reader drains it as it comes.
                let chunk = String(repeating: "r", count: 100_000)
                let reader = Task { try await collect(client.events, count: 200, seconds: 30) }
                for index in 0..<200 {
                    try server.send(text: chunk)
                    if index % 10 == 0 { try await Task.sleep(for: .milliseconds(5)) }
                }
                let received = try await reader.value
                #expect(received.count == 200 && received.allSatisfy { $0 == .text(chunk) })
                try client.close()
            }
        }
    }
}
