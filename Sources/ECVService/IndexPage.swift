import ECVProtocol
import Soup

/// `GET /`: a small page saying what this service is and where its parts live, so a person who
/// opens the service URL in a browser finds the queues, the caller and peer pages and the docs'
/// names for each endpoint instead of a JSON 404. Everything interpolated is escaped.
struct IndexPage {
    let base: String
    let configuration: ReferenceServiceConfiguration

    var html: String {
        let v175 = configuration.backendVersion == .v1_75
        var items = [
            "<li>Callers: <code>POST \(escape(base + ECVAPI.getRtcId))</code>, then <code>\(escape(ECVAPI.dialEx))</code> "
                + "(docs/protocol.md §1)</li>",
        ]
        if v175 {
            items.append("<li><a href=\"\(escape(ECVAPI.queues))\">Queues</a> (<code>GET \(escape(ECVAPI.queues))</code>): "
                + configuration.acd.validatedQueues.map(escape).joined(separator: ", ") + "</li>")
        } else {
            items.append("<li>Queues: " + configuration.acd.validatedQueues.map(escape).joined(separator: ", ") + "</li>")
        }
        items.append("<li>Caller page for a call in a browser: <code>\(escape(base))/r/&lt;rtcId&gt;</code></li>")
        items.append("<li>Agents: <code>POST \(escape(ECVAPI.agentLogin))</code>, then the agent socket <code>\(escape(ECVAPI.agentSocket))</code>"
            + (configuration.openAgents && configuration.agentSecrets.isEmpty ? " (open: no secret needed)" : " (a secret is required)") + "</li>")
        if let peer = configuration.peerServer {
            let path = peer.normalizedPath
            items.append("<li><a href=\"\(escape(path))/client\">Peer page</a>: the PeerJS peer server at <code>\(escape(path))</code></li>")
        }
        if !configuration.verification.apiKeys.isEmpty {
            items.append("<li>Identity-verification back office: <code>/kyc/api</code> (docs/protocol.md §7)</li>")
        }
        return """
            <!DOCTYPE html>
            <html><head><meta charset="utf-8"><title>ECV reference service</title></head>
            <body>
            <h1>ECV reference service</h1>
            <p>Backend \(escape("\(configuration.backendVersion)")). Point <code>ecv call</code> and <code>ecv agent</code> at
            <code>--service-url \(escape(base))</code>.</p>
            <ul>
            \(items.joined(separator: "\n"))
            </ul>
            </body></html>
            """
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
    }
}

extension ServiceRouter {
    func indexPage(_ request: HTTPServerRequest) -> HTTPServerResponse {
        let page = IndexPage(base: advertisedBase(for: request), configuration: core.configuration)
        return HTTPServerResponse(status: 200, headers: ["Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"],
                                  body: Array(page.html.utf8))
    }
}
