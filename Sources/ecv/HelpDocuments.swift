import Foundation

/// One subcommand: its name, its help (the first line is its summary) and the options it takes.
struct CommandEntry: Sendable {
    let name: String
    let usage: String
    let spec: OptionSpec

    init(_ name: String, _ usage: String, _ spec: OptionSpec) {
        self.name = name
        self.usage = usage
        self.spec = spec
    }

    var summary: String { usage.split(separator: "\n").first.map(String.init) ?? "ecv \(name)" }
}

/// The exit statuses every command uses, as `ecv --help` and the README list them.
enum ExitCode {
    static let success: Int32 = 0
    /// The job failed: a call that did not connect or ended in an error, a recording not written,
    /// an `inspect` verdict other than complete, a service that cannot start.
    static let failed: Int32 = 1
    /// Bad usage: an unknown, malformed, missing or contradictory option; nothing was attempted.
    static let usage: Int32 = 2

    static let table = """
        Exit status:
          0   success
          1   the job failed: a call that did not connect or ended in an error, a recording that was not
              written, an `ecv inspect` verdict other than complete, a service that cannot start
          2   bad usage: an unknown, malformed, missing or contradictory option (nothing was attempted)
        """
}

/// What is made from the command list: the overview, shell completion and the manual page.
enum HelpDocuments {
    static let completionUsage = """
        ecv completion bash|zsh  a completion script: source <(ecv completion bash), or in zsh
                                 source <(ecv completion zsh) after compinit (make install puts both
                                 where the shells look: bash-completion's folder, zsh's site-functions)
        """
    static let manualUsage = """
        ecv manual               the manual page ecv(1) in roff, made from this help (ecv manual | man -l -)
        """

    static var overview: String {
        """
        ecv — headless ECV video calls on GStreamer

        \(commands.map(\.summary).joined(separator: "\n"))
        ecv COMMAND --help, -h   that command's options
        ecv --version, -V        the versions of ecv (with its git commit), GStreamer and Swift

        Commands that run calls or a service take --log-level LEVEL, -v/-q and --log-format text|json
        (default level warn, or $ECV_LOG_LEVEL). --json prints JSON objects only, one a line.

        \(ExitCode.table)
        """
    }

    static func completion(_ words: [String]) throws(CLIError) {
        let arguments = try Arguments(words, OptionSpec())
        try arguments.finish()
        switch arguments.positional {
        case ["bash"]: print(bashCompletion)
        case ["zsh"]: print(zshCompletion)
        default: throw .usage("ecv completion takes bash or zsh")
        }
    }

    /// What completion offers after a command: its long options, its short ones, `--help`.
    static func completedOptions(_ entry: CommandEntry) -> [String] {
        entry.spec.all.sorted().map { "--" + $0 } + entry.spec.short.keys.sorted().map { "-\($0)" } + ["--help"]
    }

    /// Completes command names, then each command's options (and file names for values).
    static var bashCompletion: String {
        let cases = commands.map { "        \($0.name)) options=\"\(completedOptions($0).joined(separator: " "))\" ;;" }.joined(separator: "\n")
        return """
            # bash completion for ecv (ECVKit \(ECVVersion.number)); made by `ecv completion bash`
            _ecv() {
                local cur="${COMP_WORDS[COMP_CWORD]}" options=""
                if [ "$COMP_CWORD" -eq 1 ]; then
                    COMPREPLY=($(compgen -W "\(commands.map(\.name).joined(separator: " ")) --help --version" -- "$cur"))
                    return
                fi
                case "${COMP_WORDS[1]}" in
            \(cases)
                esac
                case "$cur" in
                    -*) COMPREPLY=($(compgen -W "$options" -- "$cur")) ;;
                    *) COMPREPLY=($(compgen -f -- "$cur")) ;;
                esac
            }
            complete -o filenames -F _ecv ecv
            """
    }

    /// The same completion for zsh, native: a `#compdef` function file for an fpath folder
    /// (`_ecv` in site-functions, found by compinit), which also works sourced after compinit.
    static var zshCompletion: String {
        let cases = commands.map { "        \($0.name)) options=(\(completedOptions($0).joined(separator: " "))) ;;" }.joined(separator: "\n")
        return """
            #compdef ecv
            # zsh completion for ecv (ECVKit \(ECVVersion.number)); made by `ecv completion zsh`
            _ecv() {
                local -a options
                if (( CURRENT == 2 )); then
                    compadd -- \(commands.map(\.name).joined(separator: " ")) --help --version
                    return
                fi
                case ${words[2]} in
            \(cases)
                esac
                if [[ ${words[CURRENT]} == -* ]]; then
                    compadd -- $options
                else
                    _files
                fi
            }
            if [[ ${funcstack[1]} == _ecv ]]; then
                _ecv "$@"          # autoloaded from an fpath folder: complete now
            else
                compdef _ecv ecv   # sourced
            fi
            """
    }

    static func manual(_ words: [String]) throws(CLIError) {
        let arguments = try Arguments(words, OptionSpec())
        try arguments.finish()
        guard arguments.positional.isEmpty else { throw .usage("ecv manual takes no arguments") }
        print(manualPage)
    }

    /// ecv(1): the overview, every command's help as written, log options, exit status, environment.
    static var manualPage: String {
        var page = [
            ".TH ECV 1 \"\" \"ECVKit \(ECVVersion.number)\" \"User Commands\"",
            ".SH NAME", "ecv \\- headless ECV video calls on GStreamer",
            ".SH SYNOPSIS", ".B ecv", ".I COMMAND", "[options]", ".br", ".B ecv", "\\-\\-help | \\-\\-version",
            ".SH DESCRIPTION",
            "The ECVKit command line: the reference ECV service, agent bots, callers, identity-verification and "
                + "peer-to-peer calls, recording review and media diagnostics, all headless.",
            ".SH COMMANDS",
        ]
        for entry in commands {
            page += [".SS \(roff(entry.name))", ".nf", roff(entry.usage), ".fi"]
        }
        page += [".SH LOGGING", ".nf", roff(LogOptions.help), ".fi",
                 ".SH EXIT STATUS", ".nf", roff(ExitCode.table.split(separator: "\n").dropFirst().joined(separator: "\n")), ".fi",
                 ".SH ENVIRONMENT", ".TP", ".B ECV_LOG_LEVEL", "the log level when no option sets one",
                 ".TP", ".B XDG_CONFIG_HOME", "where ecvkit/environments.json lives (default ~/.config)",
                 ".TP", ".B ECV_TRACE_DIR", "where \\-\\-tracing writes its DOT dumps",
                 ".SH SEE ALSO", "gst\\-launch\\-1.0(1), gst\\-inspect\\-1.0(1)"]
        return page.joined(separator: "\n")
    }

    /// Text as roff shows it literally: backslashes escaped, minus signs as such, no line read as a request.
    static func roff(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let escaped = line.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
            return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
        }.joined(separator: "\n")
    }
}
