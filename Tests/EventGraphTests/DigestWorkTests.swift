import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// The state digest hashed by two threads (the calling one and a helper, each taking the next chunk) must be the
/// digest hashed by one, whichever thread takes which chunk, and a cancelled digest must end its helper before it
/// returns.
@Suite("State digest on two threads")
struct DigestWorkTests {
    /// A school of about 9,600 objects: three chunks of courses, so a helper is started (8,192 objects or more).
    static func school() throws -> (state: StoreState, model: ObjectModel) {
        let (state, model) = try DigestFromColumnsTests.school(courses: 9_000)
        #expect(state.objectCount >= DigestWork.leastObjectCountForHelper)
        return (state, model)
    }

    @Test func twoThreadsGiveTheDigestOfOne() throws {
        let (state, model) = try Self.school()
        let serial = try #require(DigestWork(state: state, model: model).sum(helperThread: false) { false })
        #expect(serial.objectCount == UInt64(state.objectCount))
        #expect(serial.digest == DigestFromColumnsTests.rowDigest(of: state, model: model))
        for round in 0..<10 {
            let work = DigestWork(state: state, model: model)
            let sum = try #require(work.sum(helperThread: true) { false })
            #expect(sum == serial, "round \(round): the helper took \(work.chunksTakenByHelper) chunks")
        }
        #expect(state.digest(model: model, helperThread: true) == serial.digest)
    }

    /// A caller that is slow before each chunk (it asks `isCancelled` then) leaves most chunks to the helper: the sum
    /// is the same.
    @Test func aSlowCallerLeavesChunksToTheHelper() throws {
        let (state, model) = try Self.school()
        let work = DigestWork(state: state, model: model)
        let sum = try #require(
            work.sum(helperThread: true) {
                usleep(20_000)
                return false
            })
        #expect(work.chunksTakenByHelper > 0)
        #expect(sum.digest == state.digest(model: model))
    }

    /// The calling thread asks before it takes each chunk, whether chunks are left or not, so it asks `asks + 1`
    /// times whatever the helper takes meanwhile.
    @Test(arguments: [0, 1])
    func aCancelledDigestEndsItsHelperAndGivesNothing(after asks: Int) throws {
        let (state, model) = try Self.school()
        let count = LockedValue(0)
        let work = DigestWork(state: state, model: model)
        let sum = work.sum(helperThread: true) {
            count.withLock { count in
                count += 1
                return count > asks
            }
        }
        #expect(sum == nil)
        #expect(count.withLock { $0 } == asks + 1)
        #expect(work.helperHasEnded)
        #expect(state.digest(model: model, helperThread: true) { true } == nil)
    }

    @Test func noHelperForFewObjects() throws {
        let (state, model) = try DigestFromColumnsTests.school(courses: 5_000)
        #expect(state.objectCount < DigestWork.leastObjectCountForHelper)
        let work = DigestWork(state: state, model: model)
        let sum = try #require(work.sum(helperThread: true) { false })
        #expect(work.chunksTakenByHelper == 0)
        #expect(sum.digest == DigestFromColumnsTests.rowDigest(of: state, model: model))
    }
}
