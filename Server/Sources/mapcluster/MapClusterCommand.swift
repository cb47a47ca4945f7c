import ArgumentParser
import Foundation

/// The `mapcluster` tool: each subcommand parses its arguments and calls the libraries.
@main
struct MapClusterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mapcluster",
        abstract: "Cluster map points on a world-aligned grid.",
        discussion: """
            Points come from CSV files (columns id, lat, lon) or GeoJSON FeatureCollections of points; without files, \
            the bundled world cities. `mapcluster help SUBCOMMAND` has each one's options and examples.

            Examples:
              mapcluster serve places.csv           # a web map at http://127.0.0.1:8080/
              mapcluster cluster places.csv --zoom 5
              mapcluster tiles places.csv -o places.pmtiles
              mapcluster render places.csv --zoom 3 -o map.svg
              mapcluster bench                      # after swift build -c release
            """,
        subcommands: [ServeCommand.self, ClusterCommand.self, TilesCommand.self, RenderCommand.self, BenchCommand.self])

    /// Runs the subcommand the arguments name; `serve` takes the options they don't give from `MAPCLUSTER_…`
    /// environment variables (``EnvironmentOptions``).
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.first == ServeCommand.configuration.commandName else { return await main(arguments) }
        do {
            await main(
                try EnvironmentOptions.arguments(
                    arguments, of: ServeCommand.self, repeatable: ServeCommand.repeatableOptions,
                    environment: ProcessInfo.processInfo.environment))
        } catch {
            exit(withError: error)
        }
    }
}

/// A value as one line of JSON, with sorted keys and unescaped slashes: what every `--json` option prints.
func jsonLine(_ value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}
