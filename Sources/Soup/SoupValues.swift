internal import CGLibShims
internal import CSoup
internal import CSoupShims
import Foundation

/// A parsed, validated URL held as a `GUri`.
// @unchecked Sendable: a GUri is immutable after parsing and its reference count is atomic, so
// any thread may read it; no main-loop rule applies for `MainLoopActor` to check. It wraps a C
// pointer, which Swift cannot see to be immutable.
final class ParsedURI: @unchecked Sendable {
    let pointer: OpaquePointer
    let text: String
    let scheme: String

    private init(pointer: OpaquePointer, text: String) {
        self.pointer = pointer
        self.text = text
        scheme = g_uri_get_scheme(pointer).map { String(cString: $0) } ?? ""
    }

    deinit { g_uri_unref(pointer) }

    /// Parses `text` with the flags libsoup expects and checks scheme and host.
    static func parse(_ text: String, schemes: Set<String>) throws(HTTPError) -> ParsedURI {
        var error: UnsafeMutablePointer<GError>?
        guard let pointer = g_uri_parse(text, ecv_soup_http_uri_flags(), &error) else {
            throw .invalidURL(text, reason: error.map { GLibError(taking: $0).message } ?? "does not parse")
        }
        let uri = ParsedURI(pointer: pointer, text: text)
        guard schemes.contains(uri.scheme) else {
            throw .invalidURL(text, reason: "scheme must be one of \(schemes.sorted().joined(separator: ", ")), not \"\(uri.scheme)\"")
        }
        guard let host = g_uri_get_host(pointer), host.pointee != 0 else {
            throw .invalidURL(text, reason: "no host")
        }
        return uri
    }

    var query: String? { g_uri_get_query(pointer).map { String(cString: $0) } }
}

/// Reads every header line of a `SoupMessageHeaders` (borrowed), in wire order.
func readHeaders(_ headers: OpaquePointer?) -> HTTPHeaders {
    guard let headers else { return HTTPHeaders() }
    var iterator = SoupMessageHeadersIter()
    soup_message_headers_iter_init(&iterator, headers)
    var fields: [HTTPHeaderField] = []
    var name: UnsafePointer<CChar>?
    var value: UnsafePointer<CChar>?
    while soup_message_headers_iter_next(&iterator, &name, &value) != 0 {
        guard let name, let value else { continue }
        fields.append(HTTPHeaderField(name: String(cString: name), value: String(cString: value)))
    }
    return HTTPHeaders(fields)
}

/// Appends `headers` to a `SoupMessageHeaders`; callers validated them first.
func appendHeaders(_ headers: HTTPHeaders, to target: OpaquePointer?) {
    guard let target else { return }
    for field in headers { soup_message_headers_append(target, field.name, field.value) }
}
