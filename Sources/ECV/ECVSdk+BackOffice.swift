import ECVProtocol
import Foundation
import Soup

/// An answer from a JSON REST service reached on an SDK's pinned API client.
package struct PinnedExchangeResponse: Sendable {
    package let status: Int
    package let body: Data
    package var isSuccess: Bool { (200..<300).contains(status) }
}

extension ECVSdk {
    /// One JSON request to the API host (or any host the API pins cover), on this SDK's HTTP
    /// client: its timeouts, its CA store and its API pins. `package`: the EnQualify facade talks to
    /// its back office through it, so the back office is pinned exactly as the ECV API is.
    ///
    /// - Throws: the transport's failure as text (a pin mismatch names the certificate it saw).
    package func pinnedExchange(method: String, url: String, headers: [String: String] = [:], body: Data? = nil)
        async throws(PinnedExchangeError) -> PinnedExchangeResponse {
        var request = HTTPRequest(method: method, url: url, headers: HTTPHeaders(headers), body: body ?? Data())
        if body != nil { request.headers["Content-Type"] = "application/json" }
        do {
            let response = try await service.http.send(request)
            return PinnedExchangeResponse(status: response.status, body: response.data)
        } catch {
            throw PinnedExchangeError(message: error.description, pinMismatch: error.isPinMismatch)
        }
    }
}

/// Why a pinned exchange got no answer.
package struct PinnedExchangeError: Error, Sendable, CustomStringConvertible {
    package let message: String
    /// The server's certificate matched none of the pins.
    package let pinMismatch: Bool
    package var description: String { message }
}

extension HTTPError {
    var isPinMismatch: Bool { if case .certificateNotPinned = self { true } else { false } }
}

extension ECVSdk {
    /// Why `text` is no pin the SDK accepts (docs/protocol.md §0.2), or nil when it is one.
    package static func pinProblem(_ text: String) -> String? {
        do {
            _ = try CertificatePin(parsing: text)
            return nil
        } catch {
            return error.description
        }
    }
}
