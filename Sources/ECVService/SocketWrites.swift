import ECVProtocol
import Soup

extension WebSocketConnection {
    /// Starts the closing handshake with `code` and `reason`. `close` refuses a code an endpoint
    /// may not send and a reason over the 123 bytes a close frame holds (a script may ask for
    /// either); the socket is then closed with 1011 all the same, and the refusal logged.
    func close(code: UInt16, reason: String, log: ServiceEventLog, _ category: ServiceLogEntry.Category) {
        do {
            try close(code: code, reason: reason)
        } catch {
            log.record(category, "cannot close a socket with \(code) \"\(reason)\" (\(error)): closed with 1011 instead")
            // 1011 with an empty reason is a close every endpoint may send: this cannot throw.
            try? close(code: 1011, reason: "")
        }
    }

    /// Sends `value` as one JSON text frame. A value that does not encode (a number JSON cannot
    /// hold) is logged and not sent; a socket that is no longer open drops it (`sendIfOpen`).
    func sendJSON<T: Encodable>(_ value: T, log: ServiceEventLog, _ category: ServiceLogEntry.Category) {
        let text: String
        do throws(ProtocolError) {
            text = try ECVJSON.encodeString(value)
        } catch {
            log.record(category, "cannot send a \(T.self): \(error)")
            return
        }
        sendIfOpen(text)
    }

    /// Sends a text frame unless the socket is no longer open: then its peer is gone, and the
    /// socket's close handler does what losing it requires.
    func sendIfOpen(_ text: String) {
        // Throws only `notOpen`, which is the case described above.
        try? send(text: text)
    }
}
