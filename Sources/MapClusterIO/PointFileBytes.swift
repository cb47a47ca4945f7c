import Foundation

/// What the CSV and GeoJSON readers share: how a file is named in errors, how its bytes are reached, and how a parser
/// over raw bytes is run on `Data`.
enum PointFileBytes {
    /// How errors name a file: its path, or the URL of anything else.
    static func name(of url: URL) -> String {
        url.isFileURL ? url.path : url.absoluteString
    }

    /// A file's bytes, mapped rather than copied: its pages are read as the parser reaches them.
    static func contents(of url: URL) throws(PointFileError) -> Data {
        do {
            return try Data(contentsOf: url, options: .alwaysMapped)
        } catch {
            throw PointFileError(file: name(of: url), message: "cannot be read (\(error.localizedDescription))")
        }
    }

    /// Runs a parser over the bytes of `data`, keeping its typed error.
    static func parse(
        _ data: Data, with parser: (UnsafeBufferPointer<UInt8>) throws(PointFileError) -> PointSet
    ) throws(PointFileError) -> PointSet {
        let result = data.withUnsafeBytes { raw -> Result<PointSet, PointFileError> in
            do throws(PointFileError) {
                return .success(try parser(raw.bindMemory(to: UInt8.self)))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

extension Double {
    /// The shortest text that reads back as this number, without a fraction when it is whole: how JSON output and
    /// property text write numbers.
    var shortestText: String {
        rounded() == self && abs(self) < 1e15 ? String(Int64(self)) : String(self)
    }
}
