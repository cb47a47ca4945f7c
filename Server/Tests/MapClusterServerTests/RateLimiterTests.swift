import Testing

@testable import MapClusterServer

/// Each client address's allowance of requests, on a clock the test moves.
struct RateLimiterTests {
    @Test func aClientMaySendASecondsWorthAtOnceThenAtTheRate() {
        let limiter = RateLimiter(requestsPerSecond: 2)
        let start = ContinuousClock.now
        #expect(limiter.take(for: "10.0.0.1", at: start) == nil)
        #expect(limiter.take(for: "10.0.0.1", at: start) == nil)
        // The third waits half a second: one request refills in 1/2 s.
        #expect(limiter.take(for: "10.0.0.1", at: start) == .milliseconds(500))
        #expect(limiter.take(for: "10.0.0.2", at: start) == nil, "another client has its own allowance")
        #expect(limiter.take(for: "10.0.0.1", at: start + .milliseconds(250)) == .milliseconds(250))
        #expect(limiter.take(for: "10.0.0.1", at: start + .milliseconds(500)) == nil)
        // Idle for long, it gets a second's worth again, not more.
        let later = start + .seconds(60)
        #expect(limiter.take(for: "10.0.0.1", at: later) == nil)
        #expect(limiter.take(for: "10.0.0.1", at: later) == nil)
        #expect(limiter.take(for: "10.0.0.1", at: later) != nil)
    }

    @Test func aFractionOfARequestASecondStillAllowsOneAtOnce() {
        let limiter = RateLimiter(requestsPerSecond: 0.5)
        let start = ContinuousClock.now
        #expect(limiter.take(for: "::1", at: start) == nil)
        #expect(limiter.take(for: "::1", at: start) == .seconds(2))
    }

    @Test func idleAddressesAreForgottenOnceManyAreTracked() {
        let limiter = RateLimiter(requestsPerSecond: 10)
        let start = ContinuousClock.now
        for client in 0..<RateLimiter.trackedAddresses { _ = limiter.take(for: "10.1.\(client)", at: start) }
        #expect(limiter.trackedCount == RateLimiter.trackedAddresses)
        // A second later every allowance has refilled: those addresses are dropped when the next one comes.
        _ = limiter.take(for: "10.2.0.1", at: start + .seconds(1))
        #expect(limiter.trackedCount == 1)
    }
}
