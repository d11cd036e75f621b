internal import CGStreamer

/// A bus message as a Sendable Swift value.
package enum BusMessage: Sendable, CustomStringConvertible {
    case stateChanged(source: String, old: State, new: State, pending: State, fromPipeline: Bool)
    case error(ErrorInfo)
    case warning(ErrorInfo)
    case endOfStream
    case element(source: String, structure: Structure)
    case application(source: String, structure: Structure)
    case latency(source: String)
    case qos(source: String, live: Bool, runningTime: UInt64, processed: UInt64, dropped: UInt64)
    case asyncDone(source: String)
    case segmentDone(source: String)
    case streamStart(source: String)
    case other(type: String, source: String)

    /// What an ERROR or WARNING message says, with the element that said it.
    package struct ErrorInfo: Sendable, CustomStringConvertible, Error {
        package let source: String
        package let message: String
        package let debug: String?
        package let domain: String
        package let code: Int

        package var description: String {
            "\(source): \(message)" + (debug.map { " (\($0))" } ?? "")
        }
    }

    package var description: String {
        switch self {
        case .stateChanged(let source, let old, let new, _, _): "state-changed \(source): \(old) -> \(new)"
        case .error(let info): "error \(info)"
        case .warning(let info): "warning \(info)"
        case .endOfStream: "eos"
        case .element(let source, let structure): "element \(source): \(structure.name)"
        case .application(let source, let structure): "application \(source): \(structure.name)"
        case .latency(let source): "latency \(source)"
        case .qos(let source, _, _, let processed, let dropped): "qos \(source) processed=\(processed) dropped=\(dropped)"
        case .asyncDone(let source): "async-done \(source)"
        case .segmentDone(let source): "segment-done \(source)"
        case .streamStart(let source): "stream-start \(source)"
        case .other(let type, let source): "\(type) \(source)"
        }
    }

    /// Converts a GstMessage (borrowed) into a Swift value.
    init(_ message: UnsafeMutablePointer<GstMessage>, pipeline: UnsafeMutableRawPointer) {
        let sourcePointer = message.pointee.src
        let source = sourcePointer.flatMap { gst_object_get_path_string($0) }.map { path -> String in
            defer { g_free(path) }
            return String(cString: path)
        } ?? ""
        switch message.pointee.type {
        case GST_MESSAGE_STATE_CHANGED:
            var old = GST_STATE_VOID_PENDING, new = GST_STATE_VOID_PENDING, pending = GST_STATE_VOID_PENDING
            gst_message_parse_state_changed(message, &old, &new, &pending)
            self = .stateChanged(source: source, old: State(old), new: State(new), pending: State(pending),
                                 fromPipeline: UnsafeMutableRawPointer(sourcePointer) == pipeline)
        case GST_MESSAGE_ERROR, GST_MESSAGE_WARNING:
            var error: UnsafeMutablePointer<GError>?
            var debug: UnsafeMutablePointer<gchar>?
            let isError = message.pointee.type == GST_MESSAGE_ERROR
            if isError { gst_message_parse_error(message, &error, &debug) } else { gst_message_parse_warning(message, &error, &debug) }
            let domain = error.map { String(cString: g_quark_to_string($0.pointee.domain)) } ?? ""
            let code = Int(error?.pointee.code ?? 0)
            let text = takeErrorMessage(error) ?? "unknown"
            let debugText = debug.map { text -> String in defer { g_free(text) }; return String(cString: text) }
            let info = ErrorInfo(source: source, message: text, debug: debugText, domain: domain, code: code)
            self = isError ? .error(info) : .warning(info)
        case GST_MESSAGE_EOS:
            self = .endOfStream
        case GST_MESSAGE_ELEMENT, GST_MESSAGE_APPLICATION:
            let structure = gst_message_get_structure(message).map { Structure(reading: $0) } ?? Structure(name: "")
            self = message.pointee.type == GST_MESSAGE_ELEMENT
                ? .element(source: source, structure: structure)
                : .application(source: source, structure: structure)
        case GST_MESSAGE_LATENCY:
            self = .latency(source: source)
        case GST_MESSAGE_QOS:
            var live: gboolean = 0
            var runningTime: guint64 = 0, streamTime: guint64 = 0, timestamp: guint64 = 0, duration: guint64 = 0
            gst_message_parse_qos(message, &live, &runningTime, &streamTime, &timestamp, &duration)
            var format = GST_FORMAT_UNDEFINED
            var processed: guint64 = 0, dropped: guint64 = 0
            gst_message_parse_qos_stats(message, &format, &processed, &dropped)
            self = .qos(source: source, live: live != 0, runningTime: UInt64(runningTime), processed: UInt64(processed), dropped: UInt64(dropped))
        case GST_MESSAGE_ASYNC_DONE:
            self = .asyncDone(source: source)
        case GST_MESSAGE_SEGMENT_DONE:
            self = .segmentDone(source: source)
        case GST_MESSAGE_STREAM_START:
            self = .streamStart(source: source)
        default:
            self = .other(type: String(cString: gst_message_type_get_name(message.pointee.type)), source: source)
        }
    }
}
