/// A small seeded random number generator (SplitMix64: Steele, Lea and Flood, 2014), so that benchmark data and
/// randomized tests are the same on every run and every machine.
///
/// Visible inside this package only: it is a tool for the benchmarks and the tests, not part of the library's API.
@_spi(MapClusterServer) public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    @_spi(MapClusterServer) public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    @_spi(MapClusterServer) public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
