import Foundation
import MediaTestSupport
import Soup
import Testing

extension SoupTests {
    @Suite("Timeouts, refusal and cancellation") struct TimeoutTests {
        @Test func fullAcceptQueueGivesConnectTimeout() async throws {
            // Backlog 0 and two unaccepted connections: the kernel drops our SYNs, so the TCP
            // connect itself hangs. The read timeout is long, so only the connect timeout can fire.
            let listener = try SilentListener(backlog: 0)
            listener.fillBacklog(count: 2)
            let url = "http://127.0.0.1:\(listener.port)/join/r1"
            let client = HTTPClient(connectTimeout: .milliseconds(300), readTimeout: .seconds(30))
            let error = try await within(10, "connect timeout") {
                do throws(HTTPError) {
                    _ = try await client.send(HTTPRequest(method: "POST", url: url))
                    return HTTPError.network(url: url, message: "unexpectedly succeeded")
                } catch { return error }
            }
            #expect(error == .connectTimeout(url: url, after: .milliseconds(300)))
            #expect(error.description.contains(url))
            withExtendedLifetime(listener) {}
        }

        @Test func silentServerGivesReadTimeout() async throws {
            // The kernel completes the handshake for a listening socket, so the request is sent,
            // but nobody ever answers. The connect timeout is long, so only the read timeout fires.
            let listener = try SilentListener(backlog: 16)
            let url = "http://127.0.0.1:\(listener.port)/join/r1"
            let client = HTTPClient(connectTimeout: .seconds(30), readTimeout: .milliseconds(300))
            let error = try await within(10, "read timeout") {
                do throws(HTTPError) {
                    _ = try await client.get(url)
                    return HTTPError.network(url: url, message: "unexpectedly succeeded")
                } catch { return error }
            }
            #expect(error == .readTimeout(url: url, after: .milliseconds(300)))
            withExtendedLifetime(listener) {}
        }

        @Test func steadyTrickleLongerThanTheReadTimeoutIsNotATimeout() async throws {
            // Five chunks 150 ms apart: 750 ms in all, yet never 400 ms of silence.
            let chunks = ["al", "pha", "-be", "ta-", "gamma"]
            let responder = try TricklingResponder(chunks: chunks, pause: .milliseconds(150))
            let client = HTTPClient(connectTimeout: .seconds(2), readTimeout: .milliseconds(400))
            let response = try await client.get(responder.url)
            #expect(response.text == chunks.joined())
            await responder.finished()
        }

        @Test func stalledTLSHandshakeCountsAsConnecting() async throws {
            // TCP connects, the ClientHello goes out, nothing comes back: the connection was never
            // ready, so this is a connect timeout even though the read timeout is shorter.
            let listener = try SilentListener(backlog: 16)
            let url = "https://127.0.0.1:\(listener.port)/join/r1"
            let client = HTTPClient(connectTimeout: .milliseconds(400), readTimeout: .milliseconds(100))
            let error = try await within(10, "TLS handshake timeout") {
                do throws(HTTPError) {
                    _ = try await client.get(url)
                    return HTTPError.network(url: url, message: "unexpectedly succeeded")
                } catch { return error }
            }
            #expect(error == .connectTimeout(url: url, after: .milliseconds(400)))
            withExtendedLifetime(listener) {}
        }

        @Test func handlerSlowerThanTheConnectTimeoutIsNotAConnectTimeout() async throws {
            try await withServer({ server in
                server.route("GET", "/slow") { _ in
                    try await Task.sleep(for: .milliseconds(600))
                    return .text("done")
                }
            }) { _, base in
                let client = HTTPClient(connectTimeout: .milliseconds(250), readTimeout: .seconds(5))
                let response = try await client.get("\(base)/slow")
                #expect(response.text == "done")
            }
        }

        @Test func closedPortGivesConnectionRefusedNamingTheURL() async throws {
            let url = "http://127.0.0.1:\(closedPort())/join/r1"
            do {
                _ = try await HTTPClient().get(url)
                Issue.record("request to a closed port succeeded")
            } catch {
                #expect(error == .connectionRefused(url: url))
                #expect(error.url == url)
            }
        }

        @Test func cancellingTheTaskCancelsTheRequest() async throws {
            let started = AsyncStream<Void>.makeStream()
            try await withServer({ server in
                server.route("GET", "/hang") { _ in
                    started.continuation.yield()
                    try await Task.sleep(for: .seconds(60))
                    return .text("late")
                }
            }) { _, base in
                let client = HTTPClient(readTimeout: .seconds(60))
                let url = "\(base)/hang"
                let request = Task { () -> HTTPError? in
                    do throws(HTTPError) { _ = try await client.get(url); return nil } catch { return error }
                }
                let stream = started.stream
                try await within(10, "handler start") { for await _ in stream { break } }
                request.cancel()
                let error = try await within(10, "cancellation") { await request.value }
                #expect(error == .cancelled(url: url))
            }
        }

        @Test func webSocketConnectTimeoutAndRefusal() async throws {
            let listener = try SilentListener(backlog: 0)
            listener.fillBacklog(count: 2)
            let hanging = "ws://127.0.0.1:\(listener.port)/ws"
            do {
                _ = try await WebSocketClient.connect(url: hanging, connectTimeout: .milliseconds(300))
                Issue.record("connected to a full backlog")
            } catch {
                #expect(error == .connectTimeout(url: hanging, after: .milliseconds(300)))
            }
            let refused = "ws://127.0.0.1:\(closedPort())/ws"
            do {
                _ = try await WebSocketClient.connect(url: refused)
                Issue.record("connected to a closed port")
            } catch {
                #expect(error == .connectionRefused(url: refused))
            }
            withExtendedLifetime(listener) {}
        }
    }
}
