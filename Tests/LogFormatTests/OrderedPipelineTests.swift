import Testing

@testable import LogFormat

/// `OrderedPipeline` makes things on several workers, never more than its window ahead of the consumer, and hands
/// them to the consumer in order; failures and stops are thrown in order, and no worker outlives the run.
@Suite("Ordered pipeline")
struct OrderedPipelineTests {
    /// What the test's closures saw, shared with the workers.
    struct Seen: Sendable {
        /// Indexes whose making began, in the order they began.
        var made: [Int] = []
        /// How many consumings began.
        var consumeBegun = 0
        /// Makings running now, and the most there ever were.
        var making = 0
        /// Makings that began more than the window ahead of the consumer.
        var aheadOfWindow: [Int] = []
    }

    /// Some work per thing, so that workers overlap and the consumer falls behind them.
    static func work(_ index: Int, rounds: Int) -> Int {
        var value = index
        for _ in 0..<rounds { value = value &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407 }
        return value
    }

    static func make(_ index: Int, seen: LockedValue<Seen>, window: Int) -> Int {
        seen.withLock {
            $0.made.append(index)
            $0.making += 1
            // Every thing a window or more before this one was handed to the consumer.
            if $0.consumeBegun < index - window { $0.aheadOfWindow.append(index) }
        }
        defer { seen.withLock { $0.making -= 1 } }
        return work(index, rounds: 2_000 + (index * 7_919) % 20_000)
    }

    @Test(arguments: [0, 1, 7, 8, 9, 150], [(1, 1), (3, 2), (8, 2), (2, 4)])
    func everyThingIsConsumedInOrderAndNoneMadePastTheWindow(count: Int, shape: (window: Int, workers: Int)) throws {
        let seen = LockedValue(Seen())
        var consumed: [Int] = []
        try OrderedPipeline.run(
            count: count, window: shape.window, workerCount: shape.workers,
            make: { index in (index, Self.make(index, seen: seen, window: shape.window)) }
        ) { index, made in
            seen.withLock { $0.consumeBegun += 1 }
            #expect(made.0 == index)
            #expect(made.1 == Self.work(index, rounds: 2_000 + (index * 7_919) % 20_000))
            consumed.append(index)
            // The consumer is slower than the workers: they would run ahead if they could.
            _ = Self.work(index, rounds: 30_000)
        }
        #expect(consumed == Array(0..<count))
        let final = seen.withLock { $0 }
        #expect(final.made.sorted() == Array(0..<count))
        #expect(final.aheadOfWindow == [])
        #expect(final.making == 0)
    }

    @Test func aMakingFailureIsThrownInOrderAndNothingAfterItIsConsumed() {
        let seen = LockedValue(Seen())
        var consumed: [Int] = []
        #expect {
            try OrderedPipeline.run(
                count: 100, window: 6, workerCount: 3,
                make: { (index) throws(LogFormatError) in
                    if index == 37 || index == 41 { throw LogFormatError(.malformedPayload, "thing \(index)") }
                    return Self.make(index, seen: seen, window: 6)
                }
            ) { index, _ in
                seen.withLock { $0.consumeBegun += 1 }
                consumed.append(index)
            }
        } throws: { error in
            (error as? LogFormatError)?.message == "thing 37"
        }
        #expect(consumed == Array(0..<37))
        let final = seen.withLock { $0 }
        #expect(final.made.allSatisfy { $0 <= 37 + 6 })
        #expect(final.making == 0)
    }

    @Test func aConsumingFailureStopsTheMakingBeforeTheRunEnds() {
        let seen = LockedValue(Seen())
        #expect {
            try OrderedPipeline.run(
                count: 200, window: 5, workerCount: 2, make: { index in Self.make(index, seen: seen, window: 5) }
            ) { (index, _) throws(LogFormatError) in
                seen.withLock { $0.consumeBegun += 1 }
                if index == 20 { throw LogFormatError(.io, "consumer failed at \(index)") }
            }
        } throws: { error in
            (error as? LogFormatError)?.message == "consumer failed at 20"
        }
        let final = seen.withLock { $0 }
        #expect(final.made.allSatisfy { $0 <= 20 + 5 })
        #expect(final.making == 0)
        #expect(final.consumeBegun == 21)
    }

    @Test(arguments: [0, 13, 50])
    func aStopIsThrownBeforeTheNextConsumingAndEndsTheMaking(raisedAt: Int) {
        let seen = LockedValue(Seen())
        let stop = LockedValue(false)
        var consumed: [Int] = []
        #expect {
            try OrderedPipeline.run(
                count: 100, window: 4, workerCount: 2,
                stopReason: { stop.withLock { $0 } ? LogFormatError(.closed, "stopped") : nil },
                make: { index in
                    if index == raisedAt { stop.withLock { $0 = true } }
                    return Self.make(index, seen: seen, window: 4)
                }
            ) { index, _ in
                seen.withLock { $0.consumeBegun += 1 }
                consumed.append(index)
            }
        } throws: { error in
            (error as? LogFormatError)?.code == .closed
        }
        // Raised while thing `raisedAt` was made: it and those before it may be consumed, none after it.
        #expect(consumed.count <= raisedAt + 1 && consumed == Array(0..<consumed.count))
        let final = seen.withLock { $0 }
        #expect(final.made.count > raisedAt && final.made.allSatisfy { $0 < raisedAt + 4 })
        #expect(final.making == 0)
    }
}
