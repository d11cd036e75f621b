import Foundation

/// How the URLs of `pc_config.iceServers` (from the room server: outside input) become
/// webrtcbin's `stun-server` and `add-turn-server` values. Free of GStreamer so the mapping can be
/// fuzzed on its own (Tests/Fuzz).
enum ICEServerURLs {
    /// `stun:host:port` or `stuns:host:port` → `stun://host:port`; nil for any other scheme.
    static func stunServer(_ url: String) -> String? {
        guard url.hasPrefix("stun:") || url.hasPrefix("stuns:") else { return nil }
        return "stun://" + url.drop { $0 != ":" }.dropFirst()
    }

    /// True for a `turn:` or `turns:` URL.
    static func isTURN(_ url: String) -> Bool { url.hasPrefix("turn:") || url.hasPrefix("turns:") }

    /// `turn:host:port?transport=udp` + credentials → `turn://user:pass@host:port?transport=udp`.
    static func turnURL(_ url: String, username: String?, credential: String?) -> String {
        let scheme = url.hasPrefix("turns:") ? "turns" : "turn"
        let rest = url.drop { $0 != ":" }.dropFirst()
        let escape = { (text: String) in text.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? text }
        let userInfo = username.map { escape($0) + ":" + escape(credential ?? "") + "@" } ?? ""
        return "\(scheme)://\(userInfo)\(rest)"
    }
}
