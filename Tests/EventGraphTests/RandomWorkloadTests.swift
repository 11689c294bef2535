import EventGraph
import Foundation
import TestSupport
import Testing

@Suite("Seeded random workload against a reference model")
struct RandomWorkloadTests {
    /// What the store should hold: courses by key (code, credits) and lessons by key (title, course key).
    struct Reference: Equatable {
        var courses: [UInt64: (code: String, credits: Int32)] = [:]
        var lessons: [UInt64: (title: String, course: UInt64?)] = [:]

        static func == (a: Reference, b: Reference) -> Bool {
            a.courses.mapValues { "\($0.code)/\($0.credits)" } == b.courses.mapValues { "\($0.code)/\($0.credits)" }
                && a.lessons.mapValues { "\($0.title)/\($0.course ?? 0)" }
                    == b.lessons.mapValues { "\($0.title)/\($0.course ?? 0)" }
        }
    }

    @Test func randomSavesMatchTheReferenceAfterEveryReopen() throws {
        let seed = TestSeed.make()
        var random = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory()
        var reference = Reference()
        for step in 0..<120 {
            let container = try ModelContainer(path: directory.file(), model: TestModels.school)
            let context = container.newBackgroundContext()
            #expect(try snapshot(context) == reference, "seed \(seed), step \(step): state after reopen")
            var expected = reference
            let courses = try context.fetch(FetchDescriptor<Course>())
            let lessons = try context.fetch(FetchDescriptor<Lesson>())
            var expectFailure = false
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                switch Int.random(in: 0..<6, using: &random) {
                case 0, 1:
                    let course = Course()
                    context.insert(course)
                    course.code = "C\(Int.random(in: 0..<30, using: &random))"
                    course.credits = Int32.random(in: 0...30, using: &random)
                    expected.courses[course.objectID.key] = (course.code, course.credits)
                case 2 where !courses.isEmpty:
                    let course = courses.randomElement(using: &random)!
                    guard !course.isDeleted else { continue }
                    course.credits = Int32.random(in: 0...30, using: &random)
                    expected.courses[course.objectID.key]?.credits = course.credits
                case 3 where !courses.isEmpty:
                    let course = courses.randomElement(using: &random)!
                    guard !course.isDeleted else { continue }
                    for lesson in course.lessons { expected.lessons[lesson.objectID.key] = nil }
                    expected.courses[course.objectID.key] = nil
                    context.delete(course)
                case 4:
                    let lesson = Lesson()
                    context.insert(lesson)
                    lesson.title = "L\(step)"
                    if let course = courses.filter({ !$0.isDeleted }).randomElement(using: &random) {
                        lesson.course = course
                    }
                    expected.lessons[lesson.objectID.key] = (lesson.title, lesson.course?.objectID.key)
                case 5 where !lessons.isEmpty:
                    let lesson = lessons.randomElement(using: &random)!
                    guard !lesson.isDeleted else { continue }
                    let target = courses.filter { !$0.isDeleted }.randomElement(using: &random)
                    lesson.course = target
                    expected.lessons[lesson.objectID.key]?.course = target?.objectID.key
                default:
                    continue
                }
            }
            // Codes may repeat within this save too.
            let codes = expected.courses.values.map(\.code)
            if Set(codes).count != codes.count { expectFailure = true }
            do {
                try context.save()
                #expect(!expectFailure, "seed \(seed), step \(step): a duplicate code was accepted")
                reference = expected
            } catch {
                #expect(expectFailure, "seed \(seed), step \(step): unexpected failure \(error)")
                #expect(error.code == .uniqueness)
            }
            if step % 40 == 39 { try container.compact() }
            try container.close()
        }
    }

    private func snapshot(_ context: ObjectContext) throws -> Reference {
        var result = Reference()
        for course in try context.fetch(FetchDescriptor<Course>()) {
            result.courses[course.objectID.key] = (course.code, course.credits)
        }
        for lesson in try context.fetch(FetchDescriptor<Lesson>()) {
            result.lessons[lesson.objectID.key] = (lesson.title, lesson.course?.objectID.key)
        }
        return result
    }
}
