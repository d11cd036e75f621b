import Foundation
import Soup
import Testing

extension SoupTests {
    @Suite("Resource ownership") struct LeakTests {
        /// One full life: a server with an HTTP route and a WebSocket endpoint, a client that uses
        /// both, then everything dropped.
        private func oneLife(_ index: Int) async throws {
            let accepted = AcceptedSockets()
            let (server, base) = try await startServer { server in
                server.route("POST", "/echo") { request in HTTPServerResponse(body: request.body) }
                accepted.install(on: server)
            }
            let client = HTTPClient()
            let response = try await client.send(HTTPRequest(method: "POST", url: "\(base)/echo", body: Array("life \(index)".utf8)))
            #expect(response.text == "life \(index)")
            let socket = try await WebSocketClient.connect(url: base.replacingOccurrences(of: "http://", with: "ws://") + "/ws")
            let (serverSide, _) = try await accepted.next()
            try socket.send(text: "ping \(index)")
            let received = try await collect(serverSide.events, count: 1)
            #expect(received == [.text("ping \(index)")])
            if index.isMultiple(of: 2) {
                try socket.close()
                _ = try await collect(socket.events) // until .closed
            }
            await server.stop()
        }

        /// Waits (bounded) for a count to come back down; returns the last reading.
        private func settle(_ read: () -> Int, to limit: Int) async throws -> Int {
            var value = read()
            for _ in 0..<100 where value > limit {
                try await Task.sleep(for: .milliseconds(50))
                value = read()
            }
            return value
        }

        @Test(.timeLimit(.minutes(2))) func twoHundredServerClientPairsLeaveNoThreadsOrDescriptors() async throws {
            for index in 0..<5 { try await oneLife(index) } // warm up GLib/GnuTLS/libsoup singletons
            try await Task.sleep(for: .milliseconds(200)) // let the warm-up's closing handshakes finish
            let baselineDescriptors = openFileDescriptorCount()
            let baselineThreads = threadCount()
            let baselineObjects = SoupDiagnostics.liveObjectCount
            #expect(baselineDescriptors > 0 && baselineThreads > 0)

            for index in 0..<200 { try await oneLife(index) }

            let descriptors = try await settle(openFileDescriptorCount, to: baselineDescriptors + 8)
            let threads = try await settle(threadCount, to: baselineThreads + 4)
            let objects = try await settle({ SoupDiagnostics.liveObjectCount }, to: baselineObjects)
            // A leak of one descriptor per life would show as +200 here; of one thread, +200.
            #expect(descriptors <= baselineDescriptors + 8, "fds \(baselineDescriptors) → \(descriptors)")
            #expect(threads <= baselineThreads + 4, "threads \(baselineThreads) → \(threads)")
            // Every session, server, message and WebSocket the binding held was finalised.
            #expect(objects <= baselineObjects, "live GObjects \(baselineObjects) → \(objects)")
            print("leak check: fds \(baselineDescriptors) → \(descriptors), threads \(baselineThreads) → \(threads), objects \(baselineObjects) → \(objects)")
        }
    }
}
