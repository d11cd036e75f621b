import ECV
import Foundation

/// The four certificate lists of a `BaseModelVideoCall`, checked and turned into the SDK's pins
/// (a certificate file or Base64 DER each, docs/protocol.md §0.2), or the name of the first entry
/// that cannot pin anything.
struct CertificateLists: Sendable, Equatable {
    /// Pins of the API connections: the back office's REST API and the ECV API.
    let mapi: [String]
    /// Pins of the signalling connections: rooms and the signalling WebSocket.
    let signalling: [String]

    /// - Throws: the key `initializeFailed(with:)` reports, e.g. `"mapiCertificateList[1]: …"`.
    init(_ model: BaseModelVideoCall) throws(CertificateListError) {
        mapi = try Self.files(model.mapiCertificateList, "mapiCertificateList")
            + Self.base64(model.mapiCertificateBase64List, "mapiCertificateBase64List")
        signalling = try Self.files(model.signallingCertificateList, "signallingCertificateList")
            + Self.base64(model.signallingCertificateBase64List, "signallingCertificateBase64List")
    }

    private static func files(_ list: [String]?, _ name: String) throws(CertificateListError) -> [String] {
        var pins: [String] = []
        for (index, path) in (list ?? []).enumerated() {
            let trimmed = path.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty, FileManager.default.isReadableFile(atPath: trimmed) else {
                throw CertificateListError(key: "\(name)[\(index)]: \"\(trimmed.prefix(120))\" is not a readable certificate file")
            }
            // The SDK reads text as a path only in these forms; say that a file is meant.
            let pin = trimmed.hasPrefix("/") || trimmed.hasPrefix("./") || trimmed.hasPrefix("~/") ? trimmed : "./" + trimmed
            if let problem = ECVSdk.pinProblem(pin) { throw CertificateListError(key: "\(name)[\(index)]: \(problem)") }
            pins.append(pin)
        }
        return pins
    }

    private static func base64(_ list: [String]?, _ name: String) throws(CertificateListError) -> [String] {
        var pins: [String] = []
        for (index, text) in (list ?? []).enumerated() {
            let compact = text.filter { !$0.isWhitespace }
            guard compact.count > 64, compact.count <= 64 * 1024, Data(base64Encoded: compact) != nil,
                  ECVSdk.pinProblem(compact) == nil else {
                throw CertificateListError(key: "\(name)[\(index)]: not the Base64 of a DER certificate")
            }
            pins.append(compact)
        }
        return pins
    }
}

struct CertificateListError: Error, Sendable {
    let key: String
}
