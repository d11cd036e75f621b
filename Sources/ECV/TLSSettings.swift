import Foundation
import Soup

/// Why an SDK or agent-bot configuration cannot be honoured. Security settings that cannot be
/// honoured are errors at construction, never a silent downgrade.
public enum ECVConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A pin that is none of the accepted forms (docs/protocol.md §0.2).
    case invalidPin(String, reason: String)
    /// A CA file that is missing, unreadable or holds no certificate.
    case invalidTrustStore(path: String, reason: String)
    /// Pins or a CA file with a cleartext `http://`/`ws://` URL: they could protect nothing there.
    case cleartextURL(String)

    public var description: String {
        switch self {
        case .invalidPin(let pin, let reason): "invalid certificate pin \"\(pin.prefix(80))\": \(reason)"
        case .invalidTrustStore(let path, let reason): "cannot use the CA file \(path): \(reason)"
        case .cleartextURL(let url):
            "\(url) is cleartext but certificate pins or a CA file are set: use https:// or wss:// (nothing is sent unpinned)"
        }
    }
}

/// The parsed TLS settings of one SDK (or agent bot): pins for the API (`serviceUrl`: REST and
/// the queue socket) and for signaling (`webrtcUrl`, `signalingUrl`: rooms and the collider), and
/// an optional private CA store. `package`: the agent bot shares it; apps never see Soup types.
package struct TLSSettings: Sendable {
    package let apiPins: [CertificatePin]
    package let signalingPins: [CertificatePin]
    package let authorities: TrustedAuthorities?

    /// - Parameter signalingPins: empty uses `apiPins` (one service on one certificate).
    package init(apiPins: [String], signalingPins: [String], trustedCAFile: String?) throws(ECVConfigurationError) {
        self.apiPins = try Self.parse(apiPins)
        let signaling = try Self.parse(signalingPins)
        self.signalingPins = signaling.isEmpty ? self.apiPins : signaling
        if let trustedCAFile {
            do { authorities = try TrustedAuthorities(pemFile: trustedCAFile) } catch {
                throw .invalidTrustStore(path: trustedCAFile, reason: error.description)
            }
        } else {
            authorities = nil
        }
    }

    static let none = TLSSettings()

    /// Throws `cleartextURL` for the first `http`/`ws` URL among `apiURLs` when API pins or a CA
    /// file are set, or among `signalingURLs` when signaling pins or a CA file are set. Empty
    /// URLs (not configured) pass. URLs learned later are refused by the clients themselves.
    package func requireTLS(apiURLs: [String], signalingURLs: [String]) throws(ECVConfigurationError) {
        func cleartext(_ url: String) -> Bool {
            let lowered = url.trimmingCharacters(in: .whitespaces).lowercased()
            return lowered.hasPrefix("http://") || lowered.hasPrefix("ws://")
        }
        if !apiPins.isEmpty || authorities != nil, let url = apiURLs.first(where: cleartext) { throw .cleartextURL(url) }
        if !signalingPins.isEmpty || authorities != nil, let url = signalingURLs.first(where: cleartext) { throw .cleartextURL(url) }
    }

    private init() {
        apiPins = []
        signalingPins = []
        authorities = nil
    }

    private static func parse(_ texts: [String]) throws(ECVConfigurationError) -> [CertificatePin] {
        var pins: [CertificatePin] = []
        for text in texts {
            do { pins.append(try CertificatePin(parsing: text)) } catch {
                throw .invalidPin(text, reason: error.description)
            }
        }
        return pins
    }

    package func httpClient(connectTimeout: Duration, readTimeout: Duration, userAgent: String, signaling: Bool) -> HTTPClient {
        HTTPClient(connectTimeout: connectTimeout, readTimeout: readTimeout, userAgent: userAgent,
                   pins: signaling ? signalingPins : apiPins, trustedAuthorities: authorities)
    }

    package func webSocketOptions(signaling: Bool, userAgent: String = "ECVKit") -> WebSocketClient.Options {
        var options = WebSocketClient.Options(userAgent: userAgent, trustedAuthorities: authorities)
        options.pins = signaling ? signalingPins : apiPins
        return options
    }
}
