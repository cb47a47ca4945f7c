import Foundation
import MapClusterFuzzing
import Testing

/// The fuzz targets' seeds and every input a fuzzer found that once crashed (`Fuzz/regressions/`), replayed through
/// the code the fuzzer ran: none may trap again.
struct FuzzRegressionTests {
    static let fuzzFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz")

    static func inputs(of target: FuzzTarget) -> [URL] {
        ["corpus", "regressions"].flatMap { folder in
            let directory = fuzzFolder.appendingPathComponent(folder).appendingPathComponent(target.rawValue)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return names.sorted().map { directory.appendingPathComponent($0) }
        }
    }

    @Test(arguments: FuzzTarget.allCases)
    func everySeedAndFoundInputRunsWithoutTrapping(_ target: FuzzTarget) throws {
        let inputs = Self.inputs(of: target)
        // The seeds are committed: a target without any would fuzz from nothing.
        #expect(inputs.count >= 2, "no seeds for \(target) in \(Self.fuzzFolder.path)")
        for input in inputs { target.run(try Data(contentsOf: input)) }
    }
}
