import ECV
import Foundation

/// `--log-level`, `-v`/`-q` and `--log-format`, the same on every command that runs calls or a
/// service; `ECV_LOG_LEVEL` sets the level when no option does.
enum LogOptions {
    static let spec = OptionSpec(values: ["log-level", "log-format"], flags: ["verbose", "quiet"], short: ["v": "verbose", "q": "quiet"])

    static let help = """
          --log-level LEVEL        error, warn (the default), info or debug; else $ECV_LOG_LEVEL
          -v, --verbose            info (-vv: debug);  -q, --quiet: errors only
          --log-format text|json   log lines on stderr as timestamped text (default) or one JSON object each
        """

    struct Settings: Sendable {
        var level: Logger.Level
        var json: Bool
    }

    /// Reads the options and installs them at once (commands with nothing to check in between).
    @discardableResult
    static func apply(_ arguments: inout Arguments) throws(CLIError) -> Settings {
        let settings = try read(&arguments)
        install(settings)
        return settings
    }

    /// The SDK's log level, and a handler writing timestamped lines (or JSON objects) to stderr.
    static func install(_ settings: Settings) {
        Logger.setLevel(logLevel: settings.level)
        let json = settings.json
        Logger.setHandler { level, message in
            let line = json
                ? NDJSON.line(["time": timestamp(Date()), "level": level.description.lowercased(), "message": message])
                : "\(timestamp(Date())) \(level) \(message)"
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    static func read(_ arguments: inout Arguments) throws(CLIError) -> Settings {
        let verbose = arguments.count("verbose"), quiet = arguments.count("quiet")
        let named = arguments.value("log-level")
        if verbose > 0 && quiet > 0 { throw .usage("-v and -q exclude each other") }
        if named != nil && verbose + quiet > 0 { throw .usage("--log-level and \(verbose > 0 ? "-v" : "-q") exclude each other: give one") }
        let level: Logger.Level
        if verbose > 0 {
            level = verbose > 1 ? .debug : .info
        } else if quiet > 0 {
            level = .error
        } else if let named {
            guard let parsed = parse(named) else { throw .usage("--log-level takes error, warn, info or debug, not '\(named)'") }
            level = parsed
        } else if let environment = ProcessInfo.processInfo.environment["ECV_LOG_LEVEL"], !environment.isEmpty {
            guard let parsed = parse(environment) else { throw .usage("ECV_LOG_LEVEL takes error, warn, info or debug, not '\(environment)'") }
            level = parsed
        } else {
            level = .warn
        }
        let format = arguments.value("log-format") ?? "text"
        guard format == "text" || format == "json" else { throw .usage("--log-format takes text or json, not '\(format)'") }
        return Settings(level: level, json: format == "json")
    }

    private static func parse(_ text: String) -> Logger.Level? {
        switch text.lowercased() {
        case "error": .error
        case "warn", "warning": .warn
        case "info": .info
        case "debug": .debug
        default: nil
        }
    }

    /// UTC with milliseconds, ISO 8601 (`2026-12-06T20:51:07.042Z`): sortable, the same in text and JSON.
    static func timestamp(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        var seconds = time_t(interval.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let milliseconds = min(999, Int((interval - interval.rounded(.down)) * 1000))
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                      Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), milliseconds)
    }
}
