import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// Random inserts, updates, deletes, pushes, root saves, rollbacks and drops over a tree of contexts (a root, two
/// children, a grandchild under the first), each context's fetch checked against a plain model of what it should
/// see: its parent's view with its own unsaved changes over it. Children use `objectWins`, so a push overwrites
/// what a sibling pushed first, except where the parent deleted the object meanwhile.
@Suite("Random workloads over a tree of contexts")
struct ChildContextRandomTests {
    /// A context's unsaved changes by course code: new credits, or `nil` for a delete.
    private typealias Changes = [String: Int32?]

    private final class Node {
        let parent: Int?
        var context: ObjectContext
        var changes: Changes = [:]
        /// The codes this context inserted (they are not in its parent's view).
        var inserted: Set<String> = []
        init(parent: Int?, context: ObjectContext) {
            self.parent = parent
            self.context = context
        }
    }

    /// Fixed seeds, so that CI is deterministic: seed 6395699222754237847 found the deleted-beneath bug h15 fixed,
    /// seed 6082081789264758438 the unpushed no-op update (a child that set a value equal to the one it read, after
    /// which the root changed it, pushed nothing on save; see `ChildNoOpPushTests`); the others are arbitrary.
    /// `EG_TEST_SEED` replaces them with one to replay; `EG_TEST_SEED_COUNT=N` with N fresh ones to explore (each
    /// printed, so a failure names the seed that replays it).
    static var seeds: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let text = environment["EG_TEST_SEED"], let value = UInt64(text) { return [value] }
        if let text = environment["EG_TEST_SEED_COUNT"], let count = Int(text), count > 0 {
            return (0..<count).map { _ in UInt64.random(in: 1...UInt64.max) }
        }
        return [6_395_699_222_754_237_847, 6_082_081_789_264_758_438, 1, 2, 3, 42, 20_261_123, 7_777_777, 123_456_789]
    }

    @Test(arguments: seeds) func everyContextSeesItsParentsViewWithItsOwnChanges(seed: UInt64) throws {
        print("everyContextSeesItsParentsViewWithItsOwnChanges: seed \(seed) (replay with EG_TEST_SEED=\(seed))")
        try run(seed: seed)
    }

    /// Found by `EG_TEST_SEED_COUNT=200`: at step 151 the root deletes course C29 (unsaved); at step 156 the
    /// grandchild saves its own delete of C29 into child 1, whose view no longer has C29; at step 184 the root rolls
    /// back. The push used to drop that delete, so C29 reappeared in child 1. The rule now (as the model says, and
    /// Core Data does): a pushed delete becomes the parent's own delete, so it survives the root's rollback.
    @Test func aPushedDeleteOfAnObjectDeletedBeneathSurvivesItsRollback() throws {
        try run(seed: 6_927_930_636_285_583_519)
    }

    private func run(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        var committed: [String: Int32] = [:]
        let root = Node(parent: nil, context: container.newBackgroundContext(name: "root"))
        var nodes = [root]
        for parent in [0, 0, 1] {
            nodes.append(Node(parent: parent, context: makeChild(of: nodes[parent].context)))
        }
        func view(_ index: Int) -> [String: Int32] {
            let node = nodes[index]
            var seen = node.parent.map(view) ?? committed
            // An update of an object deleted beneath is not seen (a fetch finds no row of it).
            for (code, credits) in node.changes
            where credits == nil || seen[code] != nil || node.inserted.contains(code) {
                seen[code] = credits
            }
            return seen
        }
        var nextCode = 0
        for step in 0..<300 {
            let index = Int.random(in: 0..<nodes.count, using: &random)
            let node = nodes[index]
            let visible = view(index).keys.sorted()
            switch Int.random(in: 0..<10, using: &random) {
            case 0...2:
                let course = Course()
                node.context.insert(course)
                course.code = "C\(nextCode)"
                course.credits = Int32.random(in: 0...30, using: &random)
                node.changes[course.code] = course.credits
                node.inserted.insert(course.code)
                nextCode += 1
            case 3...4 where !visible.isEmpty:
                let code = visible.randomElement(using: &random)!
                let credits = Int32.random(in: 0...30, using: &random)
                try #require(try course(code, in: node.context)).credits = credits
                node.changes[code] = credits
            case 5 where !visible.isEmpty:
                let code = visible.randomElement(using: &random)!
                node.context.delete(try #require(try course(code, in: node.context)))
                node.changes[code] = .some(nil)
            case 6...7:
                try node.context.save()
                if let parent = node.parent {
                    let below = view(parent)
                    for (code, credits) in node.changes
                    where credits == nil || below[code] != nil || node.inserted.contains(code) {
                        nodes[parent].changes[code] = credits
                        if node.inserted.contains(code) { nodes[parent].inserted.insert(code) }
                    }
                } else {
                    committed = view(0)
                }
                node.changes = [:]
                node.inserted = []
            case 8:
                node.context.rollback()
                node.changes = [:]
                node.inserted = []
            default:
                // Drops a child (and so its own child) for a new one.
                guard node.parent != nil else { continue }
                for case (let dropped, let parent?) in nodes.map(\.parent).enumerated()
                where dropped == index || parent == index {
                    nodes[dropped].changes = [:]
                    nodes[dropped].inserted = []
                    nodes[dropped].context = makeChild(of: nodes[parent].context)
                }
            }
            for checked in nodes.indices {
                let fetched = try nodes[checked].context.fetch(FetchDescriptor<Course>())
                let seen = Dictionary(uniqueKeysWithValues: fetched.map { ($0.code, $0.credits) })
                let expected = view(checked)
                #expect(seen == expected, "seed \(seed), step \(step), context \(checked)")
                if seen != expected { return }
            }
        }
        let reader = container.newBackgroundContext()
        let stored = try reader.fetch(FetchDescriptor<Course>()).map { ($0.code, $0.credits) }
        #expect(Dictionary(uniqueKeysWithValues: stored) == committed, "seed \(seed)")
    }

    private func makeChild(of parent: ObjectContext) -> ObjectContext {
        let child = parent.makeChildContext()
        child.mergePolicy = .objectWins
        return child
    }

    private func course(_ code: String, in context: ObjectContext) throws -> Course? {
        try context.fetch(FetchDescriptor<Course>(predicate: #Predicate { $0.code == code })).first
    }
}
