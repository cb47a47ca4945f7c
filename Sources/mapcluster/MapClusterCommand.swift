import ArgumentParser

/// The `mapcluster` tool: each subcommand parses its arguments and calls the libraries.
@main
struct MapClusterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mapcluster",
        abstract: "Cluster map points on a world-aligned grid.",
        subcommands: [ClusterCommand.self, BenchCommand.self])
}
