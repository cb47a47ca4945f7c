import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What the process uses of the machine's memory, for `/api/stats` and `mapcluster bench`.
package enum ProcessMemory {
    /// The process's resident memory now, in megabytes, from /proc on Linux; `nil` where that isn't there.
    package static var residentMegabytes: Double? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes / 1024
    }

    /// The process's peak resident memory (its high-water mark), in megabytes.
    package static var peakMegabytes: Double {
        var usage = rusage()
        #if canImport(Darwin)
            getrusage(RUSAGE_SELF, &usage)
            return Double(usage.ru_maxrss) / 1_048_576  // bytes
        #else
            getrusage(RUSAGE_SELF.rawValue, &usage)
            return Double(usage.ru_maxrss) / 1024  // kilobytes
        #endif
    }
}

extension Duration {
    /// The duration in milliseconds, with its fraction.
    package var milliseconds: Double {
        Double(components.seconds) * 1e3 + Double(components.attoseconds) * 1e-15
    }
}
