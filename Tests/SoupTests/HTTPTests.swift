import Foundation
import Soup
import Testing

struct Greeting: Codable, Equatable, Sendable {
    var name: String
    var count: Int
}

extension SoupTests {
    @Suite("HTTP client and server") struct HTTPTests {
        @Test func getRoundTripCarriesHeadersAndQuery() async throws {
            try await withServer({ server in
                server.route("GET", "/hello") { request in
                    try .json(["path": request.path,
                               "who": request.queryValue("who") ?? "-",
                               "token": request.headers["X-Auth-Token"] ?? "-",
                               "method": request.method])
                }
            }) { _, base in
                let client = HTTPClient()
                let response = try await client.send(.get("\(base)/hello/world?who=a%20b&x=1", headers: ["X-Auth-Token": "t0k3n"]))
                #expect(response.status == 200)
                #expect(response.headers["content-type"] == "application/json")
                let body = try response.json([String: String].self)
                #expect(body == ["path": "/hello/world", "who": "a b", "token": "t0k3n", "method": "GET"])
            }
        }

        @Test func postJSONRoundTrip() async throws {
            try await withServer({ server in
                server.route("POST", "/join") { request in
                    var greeting = try request.json(Greeting.self)
                    greeting.count += 1
                    return try .json(greeting, status: 201, headers: ["X-Room": request.pathSegments(after: "/join").first ?? ""])
                }
            }) { _, base in
                let client = HTTPClient()
                let request = try HTTPRequest.json("POST", "\(base)/join/room42", body: Greeting(name: "ada", count: 41))
                #expect(request.headers["Content-Type"] == "application/json")
                let response = try await client.send(request)
                #expect(response.status == 201)
                #expect(response.headers["X-Room"] == "room42")
                #expect(try response.json(Greeting.self) == Greeting(name: "ada", count: 42))
            }
        }

        @Test func asyncHandlerAnswersLaterWithoutBlockingOthers() async throws {
            try await withServer({ server in
                server.route("GET", "/slow") { _ in
                    try await Task.sleep(for: .milliseconds(400))
                    return .text("slow")
                }
                server.route("GET", "/fast") { _ in .text("fast") }
            }) { _, base in
                let client = HTTPClient(readTimeout: .seconds(5))
                async let slow = client.get("\(base)/slow")
                try await Task.sleep(for: .milliseconds(50))
                // The fast answer arrives while the slow handler is still sleeping: the loop is free.
                let fast = try await client.get("\(base)/fast")
                #expect(fast.text == "fast")
                let slowResponse = try await slow
                #expect(slowResponse.text == "slow")
                #expect(slowResponse.status == 200)
            }
        }

        @Test func unknownPathIs404AndWrongMethodIs405() async throws {
            try await withServer({ server in
                server.route("POST", "/message") { _ in .status(204) }
            }) { _, base in
                let client = HTTPClient()
                let missing = try await client.get("\(base)/nothing/here")
                #expect(missing.status == 404)
                #expect(!missing.isSuccess)
                let wrongMethod = try await client.get("\(base)/message")
                #expect(wrongMethod.status == 405)
                #expect(wrongMethod.headers["Allow"] == "POST")
                let prefixOnly = try await client.send(HTTPRequest(method: "POST", url: "\(base)/messages"))
                #expect(prefixOnly.status == 404) // "/message" does not cover "/messages"
            }
        }

        @Test func handlerErrorsBecome500() async throws {
            struct Broken: Error {}
            try await withServer({ server in
                server.route("GET", "/broken") { _ in throw Broken() }
            }) { _, base in
                let response = try await HTTPClient().get("\(base)/broken")
                #expect(response.status == 500)
                #expect(response.text?.contains("Broken") == true)
            }
        }

        @Test func fiftyConcurrentRequestsAreAllAnsweredCorrectly() async throws {
            try await withServer({ server in
                server.route("POST", "/echo") { request in
                    try await Task.sleep(for: .milliseconds(Int.random(in: 0...20)))
                    return HTTPServerResponse(status: 200, headers: ["X-Index": request.headers["X-Index"] ?? ""], body: request.body)
                }
            }) { _, base in
                let client = HTTPClient(readTimeout: .seconds(10))
                let results = try await withThrowingTaskGroup(of: (Int, HTTPResponse).self) { group in
                    for index in 0..<50 {
                        group.addTask {
                            let request = HTTPRequest(method: "POST", url: "\(base)/echo", headers: ["X-Index": "\(index)"],
                                                      body: Array("payload-\(index)".utf8))
                            return (index, try await client.send(request))
                        }
                    }
                    var all: [(Int, HTTPResponse)] = []
                    for try await result in group { all.append(result) }
                    return all
                }
                #expect(results.count == 50)
                for (index, response) in results {
                    #expect(response.status == 200)
                    #expect(response.headers["X-Index"] == "\(index)")
                    #expect(response.text == "payload-\(index)")
                }
            }
        }

        @Test func largeBodiesSurviveBothWays() async throws {
            try await withServer({ server in
                server.route("PUT", "/blob") { request in HTTPServerResponse(body: request.body.reversed()) }
            }) { _, base in
                let payload = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
                let response = try await HTTPClient().send(HTTPRequest(method: "PUT", url: "\(base)/blob", body: payload))
                #expect(response.body == payload.reversed())
            }
        }

        @Test func badInputIsRejectedWithClearErrors() async throws {
            let client = HTTPClient()
            await #expect(throws: HTTPError.self) { try await client.get("not a url") }
            do {
                _ = try await client.get("ftp://127.0.0.1/file")
                Issue.record("ftp URL accepted")
            } catch {
                guard case .invalidURL(let url, let reason) = error else { Issue.record("wrong error \(error)"); return }
                #expect(url == "ftp://127.0.0.1/file")
                #expect(reason.contains("scheme"))
            }
            do {
                _ = try await client.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:1/", headers: ["X-Evil": "a\r\nInjected: yes"]))
                Issue.record("header injection accepted")
            } catch {
                guard case .invalidRequest = error else { Issue.record("wrong error \(error)"); return }
            }
            do {
                _ = try await client.send(HTTPRequest(method: "GE T", url: "http://127.0.0.1:1/"))
                Issue.record("bad method accepted")
            } catch {
                guard case .invalidRequest = error else { Issue.record("wrong error \(error)"); return }
            }
        }

        @Test func serverLifecycleErrorsAreClear() async throws {
            let server = HTTPServer()
            await #expect(throws: HTTPServerError.invalidAddress("localhost-ish")) { try await server.listen(host: "localhost-ish") }
            let port = try await server.listen()
            #expect(server.port == port)
            #expect(server.baseURL == "http://127.0.0.1:\(port)")
            await #expect(throws: HTTPServerError.alreadyListening(port: port)) { try await server.listen() }
            let rival = HTTPServer()
            do throws(HTTPServerError) {
                try await rival.listen(port: port)
                Issue.record("two servers bound the same port")
            } catch {
                guard case .listenFailed(let host, let failedPort, _) = error else { Issue.record("wrong error \(error)"); return }
                #expect(host == "127.0.0.1" && failedPort == port)
            }
            await server.stop()
            #expect(server.port == nil)
            // Dropping a listening server without `stop` closes it too.
            var dropped: HTTPServer? = HTTPServer()
            let droppedPort = try await dropped?.listen() ?? 0
            dropped = nil
            do throws(HTTPError) {
                _ = try await HTTPClient().get("http://127.0.0.1:\(droppedPort)/")
                Issue.record("dropped server still answers")
            } catch {
                #expect(error == .connectionRefused(url: "http://127.0.0.1:\(droppedPort)/"))
            }
            await #expect(throws: HTTPServerError.stopped) { try await server.listen() }
            do throws(HTTPError) {
                _ = try await HTTPClient().get("http://127.0.0.1:\(port)/")
                Issue.record("stopped server still answers")
            } catch {
                #expect(error == .connectionRefused(url: "http://127.0.0.1:\(port)/"))
            }
        }

        @Test func headersKeepOrderAndRepeats() {
            var headers: HTTPHeaders = ["B": "2", "A": "1"]
            headers.add("Set-Cookie", "x=1")
            headers.add("set-cookie", "y=2")
            #expect(headers.fields.map(\.name) == ["B", "A", "Set-Cookie", "set-cookie"])
            #expect(headers.values(for: "SET-COOKIE") == ["x=1", "y=2"])
            headers["a"] = "3"
            #expect(headers.fields.map(\.value) == ["2", "3", "x=1", "y=2"])
            headers["b"] = nil
            #expect(!headers.contains("B"))
        }
    }
}
