import ArgumentParser
import Foundation

/// A subcommand's options given by environment variables, as twelve-factor apps take their configuration:
/// `MAPCLUSTER_PORT=9000` for `--port 9000`, `MAPCLUSTER_WRITABLE=true` for `--writable`.
///
/// An option given on the command line wins over its variable. The options are read from the subcommand's own help,
/// so a new option has its variable with no list to keep. A repeatable option takes several values separated by
/// commas (`MAPCLUSTER_REDUCE=population:sum,elevation:max`).
enum EnvironmentOptions {
    /// What every variable's name starts with.
    static let prefix = "MAPCLUSTER_"

    /// One option of a subcommand.
    struct Option: Equatable {
        /// Its long name, without the dashes: `max-connections`.
        let name: String
        /// Whether it is a flag, which takes no value.
        let isFlag: Bool

        /// `MAPCLUSTER_MAX_CONNECTIONS`.
        var variable: String { prefix + name.uppercased().replacingOccurrences(of: "-", with: "_") }
    }

    /// The options `command`'s help lists (an option's first long name), but `--help`.
    static func options(of command: any ParsableCommand.Type) -> [Option] {
        let help = command.helpMessage(columns: 10_000)
        var options: [Option] = []
        // Past the overview, whose text may name options too: each option's line starts with two spaces and its names.
        for line in help.components(separatedBy: "\n").drop(while: { !$0.hasPrefix("USAGE:") }) {
            guard line.hasPrefix("  -") else { continue }
            // `  --port <port>   The port…`, `  -o, --output <file>`, `  --writable   Take edits…`: the names and
            // value end where two spaces start the help.
            let names = line.dropFirst(2).components(separatedBy: "  ")[0]
            guard let long = names.range(of: "--") else { continue }
            let name = String(names[long.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "-" })
            guard name != "help", name != "version" else { continue }
            options.append(Option(name: name, isFlag: !names.contains("<")))
        }
        return options
    }

    /// `arguments` (a subcommand's, its name first) with the options of `command` that they don't give taken from
    /// `environment`; the options named in `repeatable` take several values, separated by commas.
    ///
    /// - Throws: `ValidationError` for a flag's variable that is neither true nor false.
    static func arguments(
        _ arguments: [String], of command: any ParsableCommand.Type, repeatable: Set<String> = [],
        environment: [String: String]
    ) throws -> [String] {
        var result = arguments
        let given = arguments.prefix { $0 != "--" }
        for option in options(of: command) {
            guard let value = environment[option.variable] else { continue }
            let spelled = "--\(option.name)"
            guard !given.contains(where: { $0 == spelled || $0.hasPrefix(spelled + "=") }) else { continue }
            // After the subcommand's name, before any `--` and the files after it.
            let at = result.firstIndex(of: "--") ?? result.endIndex
            if option.isFlag {
                switch value.lowercased() {
                case "1", "true", "yes", "on": result.insert(spelled, at: at)
                case "", "0", "false", "no", "off": break
                default:
                    throw ValidationError("\(option.variable) must be true or false (1 or 0), not '\(value)'")
                }
            } else {
                let values = value.split(separator: ",", omittingEmptySubsequences: false)
                let repeatable = values.count > 1 && repeatable.contains(option.name)
                result.insert(
                    contentsOf: (repeatable ? values.map(String.init) : [value]).flatMap { [spelled, $0] }, at: at)
            }
        }
        return result
    }
}
