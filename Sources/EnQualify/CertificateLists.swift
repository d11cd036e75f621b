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
        let directory = model.certificateDirectory
        mapi = try Self.files(model.mapiCertificateList, "mapiCertificateList", directory: directory)
            + Self.base64(model.mapiCertificateBase64List, "mapiCertificateBase64List")
        signalling = try Self.files(model.signallingCertificateList, "signallingCertificateList", directory: directory)
            + Self.base64(model.signallingCertificateBase64List, "signallingCertificateBase64List")
    }

    /// The file extensions a bare certificate name may have in the certificate directory.
    static let nameExtensions = ["", ".der", ".cer", ".crt", ".pem"]

    /// A path as given, or a bare name (no `/`) resolved in `directory`.
    static func resolve(_ entry: String, directory: String?) -> String? {
        let readable = { (path: String) in FileManager.default.isReadableFile(atPath: path) ? path : nil }
        guard !entry.contains("/") else { return readable(entry) }
        // A bare name is a resource name: never "..", never hidden, never looked up outside the folder.
        guard entry != ".", entry != "..", !entry.hasPrefix(".") else { return nil }
        if let directory, !directory.isEmpty {
            let base = directory.hasSuffix("/") ? directory : directory + "/"
            return nameExtensions.lazy.compactMap { readable(base + entry + $0) }.first
        }
        return readable(entry)
    }

    private static func files(_ list: [String]?, _ name: String, directory: String?) throws(CertificateListError) -> [String] {
        var pins: [String] = []
        for (index, entry) in (list ?? []).enumerated() {
            let given = entry.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !given.isEmpty, let trimmed = resolve(given, directory: directory) else {
                let place = !given.contains("/") && directory != nil ? " (nor a certificate of that name in \(directory ?? ""))" : ""
                throw CertificateListError(key: "\(name)[\(index)]: \"\(given.prefix(120))\" is not a readable certificate file\(place)")
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
