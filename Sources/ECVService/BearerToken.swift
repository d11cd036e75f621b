/// The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1; the scheme in any case),
/// without the spaces around it; nil for another scheme or no token. Pure Swift with no imports,
/// so the `request-fields` fuzz target compiles this file as it is.
func bearerToken(_ header: String?) -> String? {
    guard let header else { return nil }
    let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
    guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
    var token = parts[1]
    while let first = token.first, first == " " || first == "\t" { token.removeFirst() }
    while let last = token.last, last == " " || last == "\t" { token.removeLast() }
    return token.isEmpty ? nil : String(token)
}
