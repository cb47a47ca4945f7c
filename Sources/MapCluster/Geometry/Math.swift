// The C math library, without Foundation: the core depends on the standard library alone.
#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(ucrt)
    import ucrt
#endif

@inline(__always) package func mathSin(_ x: Double) -> Double { sin(x) }
@inline(__always) package func mathCos(_ x: Double) -> Double { cos(x) }
@inline(__always) package func mathLog(_ x: Double) -> Double { log(x) }
@inline(__always) package func mathExp(_ x: Double) -> Double { exp(x) }
@inline(__always) package func mathAtan(_ x: Double) -> Double { atan(x) }
@inline(__always) package func mathLog2(_ x: Double) -> Double { log2(x) }
@inline(__always) package func mathExp2(_ x: Double) -> Double { exp2(x) }
@inline(__always) package func mathAsin(_ x: Double) -> Double { asin(x) }
@inline(__always) package func mathAtan2(_ y: Double, _ x: Double) -> Double { atan2(y, x) }
