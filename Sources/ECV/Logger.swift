import ECVProtocol
import Foundation
import Synchronization

/// The SDK's logger, as the seed guide uses it: `Logger.setLevel(logLevel: .debug)`,
/// `Logger.info("…")`. A library never imposes its output: install a handler to route lines
/// into your own logging (the default writes to standard error).
public enum Logger {
    public enum Level: Int, Sendable, Comparable, CustomStringConvertible {
        case debug = 0, info, warn, error

        public var description: String {
            switch self {
            case .debug: "DEBUG"
            case .info: "INFO"
            case .warn: "WARN"
            case .error: "ERROR"
            }
        }
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public typealias Handler = @Sendable (_ level: Level, _ message: String) -> Void

    private static let state = Mutex<(level: Level, handler: Handler)>((.info, Logger.standardError))

    /// Lines below `logLevel` are dropped. Default: `.info`.
    public static func setLevel(logLevel: Level) { state.withLock { $0.level = logLevel } }
    public static var level: Level { state.withLock { $0.level } }

    /// Routes every line at or above the level to `handler` instead of standard error.
    public static func setHandler(_ handler: @escaping Handler) { state.withLock { $0.handler = handler } }
    /// Restores the standard-error handler.
    public static func resetHandler() { state.withLock { $0.handler = Logger.standardError } }

    public static func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public static func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public static func warn(_ message: @autoclosure () -> String) { log(.warn, message()) }
    public static func error(_ message: @autoclosure () -> String) { log(.error, message()) }
    /// Logs an `ErrorObject`, as the seed's `Logger.error(videoCall.lastError)` does.
    public static func error(_ object: ErrorObject) { log(.error, "\(object.name): \(object.message)") }

    public static func log(_ level: Level, _ message: @autoclosure () -> String) {
        let (threshold, handler) = state.withLock { ($0.level, $0.handler) }
        guard level >= threshold else { return }
        // Messages quote what services and peers sent: escaped and bounded to one line.
        handler(level, LogText.sanitized(message(), limit: 4096))
    }

    public static let standardError: Handler = { level, message in
        let line = "[ECV] \(level) \(message)\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}
