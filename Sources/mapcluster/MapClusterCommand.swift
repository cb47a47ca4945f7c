import ArgumentParser

@main
struct MapClusterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "mapcluster")
}
