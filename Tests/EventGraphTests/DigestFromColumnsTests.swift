import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// The state digest hashes attribute values straight from the columns (fixed-width words, binaries and ASCII text
/// from the arena); it must stay the digest of the decoded rows, value for value, or every checkpoint written before
/// would stop verifying.
@Suite("State digest read from the columns")
struct DigestFromColumnsTests {
    /// The digest as it was computed from rows (each object's values decoded into a row, then hashed).
    static func rowDigest(of state: StoreState, model: ObjectModel) -> StateDigest {
        var hasher = DigestHasher()
        hasher.combine(integer: UInt64(state.objectCount))
        for entityIndex in StoreState.digestOrder(of: model) {
            let names = model.entities.map(\.name)
            func combine(_ reference: ObjectReference) {
                let store = state.storeUUID(of: reference) ?? .zero
                hasher.combine(integer: store.high)
                hasher.combine(integer: store.low)
                hasher.combine(string: names[Int(reference.entityIndex)])
                hasher.combine(integer: reference.key)
            }
            let entity = model.entities[entityIndex]
            let plan = entity.properties.indices.filter { entity.isPersistentProperty[$0] }
                .sorted { entity.properties[$0].name < entity.properties[$1].name }
            var rows: [Row] = []
            state.forEachRow(ofEntity: entityIndex) { rows.append($0) }
            for row in rows.sorted(by: { $0.key < $1.key }) {
                combine(row.reference)
                for index in plan {
                    hasher.combine(string: entity.properties[index].name)
                    switch row.values[index] {
                    case .attribute(let attribute):
                        hasher.combine(byte: 0xA0)
                        hasher.combine(attribute)
                    case .toOne(let target):
                        hasher.combine(byte: 0xA1)
                        if let target { combine(target) } else { hasher.combine(byte: 0) }
                    case .toMany(let targets):
                        hasher.combine(byte: 0xA2)
                        hasher.combine(integer: UInt64(targets.count))
                        let ordered = entity.properties[index].relationship?.isOrdered ?? false
                        let sorted = targets.sorted {
                            (names[Int($0.entityIndex)], $0.key) < (names[Int($1.entityIndex)], $1.key)
                        }
                        for target in ordered ? targets : sorted { combine(target) }
                    }
                }
            }
        }
        return StateDigest(value: hasher.state)
    }

    @Test func everyKindOfAttributeHashesAsItsDecodedValue() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
        let context = container.newBackgroundContext()
        let texts = [
            "", "a", "exactly8", "ascii text longer than eight bytes", "é", "naïve café", "日本語のテキスト", "🙂 emoji",
        ]
        for (index, text) in texts.enumerated() {
            let sample = Sample()
            context.insert(sample)
            sample.int16 = Int16(-index)
            sample.int32 = Int32(index) * -1000
            sample.int64 = Int64(index) << 40
            sample.double = Double(index) / 3
            sample.float = -Float(index) / 7
            sample.bool = index % 2 == 0
            sample.string = text
            sample.date = Date(timeIntervalSinceReferenceDate: Double(index) * 1e6)
            sample.uuid = UUID()
            sample.url = URL(string: "https://example.com/\(index)/ü")!
            sample.decimal = Decimal(index) / 10
            sample.data = Data((0..<(index * 5)).map { UInt8(truncatingIfNeeded: $0 * 37 + 200) })
            sample.optionalString = index % 3 == 0 ? nil : text + "!"
            sample.optionalInt = index % 2 == 0 ? nil : index
            sample.large = index % 2 == 0 ? Data(repeating: UInt8(index), count: 100) : nil
            sample.point = index % 2 == 0 ? Point(x: Double(index), y: -1) : nil
        }
        try context.save()
        let state = container.store.state.withLock { $0 }
        #expect(try container.stateDigest() == Self.rowDigest(of: state, model: TestModels.samples))
        try container.close()
    }

    @Test func relationshipsAndObjectsOfSeveralChunksHashAsTheirRows() throws {
        let (state, model) = try Self.school(courses: 5_000)
        #expect(state.digest(model: model) == Self.rowDigest(of: state, model: model))
        #expect(state.digest(model: model, helperThread: true) == Self.rowDigest(of: state, model: model))
    }

    /// A school of several chunks: courses in to-many lists of students out of key order (a later save adds objects
    /// with smaller keys) and of two entities, deleted courses (emptied slots, keys out of slot order), lessons with
    /// and without a course, strings that are not ASCII.
    static func school(courses courseCount: Int) throws -> (state: StoreState, model: ObjectModel) {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let context = container.newBackgroundContext()
        var courses: [Course] = []
        for index in 0..<courseCount {
            let course = Course()
            context.insert(course)
            course.code = index % 13 == 0 ? "C\(index) – ü" : "C\(index)"
            courses.append(course)
        }
        for index in 0..<300 {
            let lesson = Lesson()
            context.insert(lesson)
            lesson.title = "L\(index)"
            lesson.course = index % 7 == 0 ? nil : courses[index % 11]
            let student = Student()
            context.insert(student)
            student.name = "Student \(index) Ø"
            student.courses = Set(courses[index % 5..<index % 5 + 3])
        }
        try context.save()
        var people: [Person] = []
        for index in 0..<20 {
            let person: Person = index % 2 == 0 ? Student() : Teacher()
            context.insert(person)
            person.name = "P\(index)"
            people.append(person)
        }
        try context.save()
        for person in people.reversed() { person.courses.insert(courses[courseCount - 1]) }
        try context.save()
        for course in courses[courseCount * 4 / 5..<courseCount * 4 / 5 + 100] { context.delete(course) }
        try context.save()
        let state = container.store.state.withLock { $0 }
        try container.close()
        return (state, TestModels.school)
    }

    /// The hasher is FNV-1a over 64-bit words with the prime 2^88 + 2^8 + 0x3B, whichever way the prime is written
    /// in it (a literal since the constant stopped being initialized lazily): every digest recorded in a store rests
    /// on it.
    @Test func hasherIsFNV1aWithItsPrime() {
        let prime: UInt128 = (1 << 88) + (1 << 8) + 0x3B
        var expected: UInt128 = 0x6C62_272E_07BB_0142_62B8_2175_6295_C58D
        var hasher = DigestHasher()
        var word: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<1000 {
            expected = (expected ^ UInt128(word)) &* prime
            hasher.combine(integer: word)
            word = word &* 0x2545_F491_4F6C_DD1D &+ 1
        }
        #expect(hasher.state == expected)
        var empty = DigestHasher()
        empty.combine(string: "")
        #expect(empty.state == 0xD228_CB69_101A_8CAF_7891_2B70_4E4A_147F)
    }

    /// A fixed-width value is hashed from its tag and bit pattern as its decoded value always was (its type's byte,
    /// then its integer, bit pattern or boolean), for every tag and for bit patterns no value encodes to (a hostile
    /// file's words: high bits beside a short integer, NaN payloads).
    @Test func fixedWidthValuesHashAsTheirDecodedValues() {
        /// The words the digest has hashed for each fixed-width value since digests were recorded.
        func canonical(_ value: AttributeValue) -> DigestHasher {
            var hasher = DigestHasher()
            switch value {
            case .int16(let v): hasher.combine(byte: 1); hasher.combine(integer: UInt64(bitPattern: Int64(v)))
            case .int32(let v): hasher.combine(byte: 2); hasher.combine(integer: UInt64(bitPattern: Int64(v)))
            case .int64(let v): hasher.combine(byte: 3); hasher.combine(integer: UInt64(bitPattern: v))
            case .double(let v): hasher.combine(byte: 4); hasher.combine(integer: v.bitPattern)
            case .float(let v): hasher.combine(byte: 5); hasher.combine(integer: UInt64(v.bitPattern))
            case .bool(let v): hasher.combine(byte: 6); hasher.combine(byte: v ? 1 : 0)
            case .date(let v): hasher.combine(byte: 8); hasher.combine(integer: v.bitPattern)
            default: Issue.record("\(value) is not fixed-width")
            }
            return hasher
        }
        let tags: [ValueTag] = [.int16, .int32, .int64, .double, .float, .bool, .date]
        let words: [UInt64] = [
            0, 1, 2, 0x7FFF, 0x8000, 0xFFFF_FFFF, 0x1_0000_0001, UInt64.max, 0x7FF8_0000_0000_0001,
            0xFFF0_0000_0000_0000, (-1.5).bitPattern, UInt64(Float(-2.25).bitPattern), 0x7FC0_0001,
        ]
        for tag in tags {
            for word in words {
                var fromStorage = DigestHasher()
                fromStorage.combine(fixedWidth: tag, word)
                var fromValue = DigestHasher()
                fromValue.combine(AttributeValue(fixedWidth: tag, word))
                let expected = canonical(AttributeValue(fixedWidth: tag, word)).state
                #expect(fromStorage.state == expected, "tag \(tag), word \(word)")
                #expect(fromValue.state == expected, "tag \(tag), word \(word)")
            }
        }
    }
}
