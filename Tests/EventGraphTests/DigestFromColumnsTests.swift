import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// The state digest hashes attribute values straight from the columns (fixed-width words, binaries and ASCII text
/// from the arena), a batch of objects side by side; it must stay the digest of the decoded rows, value for value,
/// object by object, or two stores with the same state could have different digests.
@Suite("State digest read from the columns")
struct DigestFromColumnsTests {
    /// The digest computed from rows, by the definition (``StateDigest``, `EntityDigestWords`): each object's values
    /// decoded into a row, its words hashed by a chain of its own — its entity's reference word, its properties'
    /// names in name order, its key, then per property a kind byte and the value (a reference as its reference word
    /// and key; an unordered list as its count and the sum of its targets' mixed references) — and the chains added
    /// up by ``DigestSum``. Entities and rows are visited in reverse: the order must not matter.
    static func rowDigest(of state: StoreState, model: ObjectModel) -> StateDigest {
        var sum = DigestSum()
        let names = model.entities.map(\.name)
        func referenceWord(_ store: LogUUID, _ entityName: String) -> UInt64 {
            var hasher = DigestHasher()
            hasher.combine(integer: store.high)
            hasher.combine(integer: store.low)
            hasher.combine(string: entityName)
            return UInt64(truncatingIfNeeded: DigestSum.mix(hasher.state))
        }
        func word(_ reference: ObjectReference) -> UInt64 {
            referenceWord(state.storeUUID(of: reference) ?? .zero, names[Int(reference.entityIndex)])
        }
        for entityIndex in model.entities.indices.reversed() {
            let entity = model.entities[entityIndex]
            let plan = entity.properties.indices.filter { entity.isPersistentProperty[$0] }
                .sorted { entity.properties[$0].name < entity.properties[$1].name }
            var rows: [Row] = []
            state.forEachRow(ofEntity: entityIndex) { rows.append($0) }
            for row in rows.reversed() {
                var hasher = DigestHasher()
                hasher.combine(integer: referenceWord(.zero, entity.name))
                for index in plan { hasher.combine(string: entity.properties[index].name) }
                hasher.combine(integer: row.key)
                for index in plan {
                    switch row.values[index] {
                    case .attribute(let attribute):
                        hasher.combine(byte: 0xA0)
                        hasher.combine(attribute)
                    case .toOne(let target):
                        hasher.combine(byte: 0xA1)
                        if let target {
                            hasher.combine(integer: word(target))
                            hasher.combine(integer: target.key)
                        } else {
                            hasher.combine(byte: 0)
                        }
                    case .toMany(let targets):
                        hasher.combine(byte: 0xA2)
                        hasher.combine(integer: UInt64(targets.count))
                        if entity.properties[index].relationship?.isOrdered ?? false {
                            for target in targets {
                                hasher.combine(integer: word(target))
                                hasher.combine(integer: target.key)
                            }
                        } else {
                            let total = targets.reduce(UInt128(0)) {
                                $0 &+ DigestSum.mix(UInt128(word($1)) << 64 | UInt128($1.key))
                            }
                            hasher.combine(integer: UInt64(truncatingIfNeeded: total))
                            hasher.combine(integer: UInt64(truncatingIfNeeded: total >> 64))
                        }
                    }
                }
                sum.add(object: hasher)
            }
        }
        return sum.digest
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

    /// Byte values of every length from 0 to 44 bytes (every tail length, several whole words), text (ASCII or not,
    /// so some are decoded first) and binaries, in objects hashed side by side in a batch, each hash as its row's.
    @Test func byteValuesOfEveryLengthHashAsTheirRows() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
        let context = container.newBackgroundContext()
        for index in 0..<301 {
            let sample = Sample()
            context.insert(sample)
            let length = index * 7 % 45
            let text = String((0..<length).map { Character(UnicodeScalar(UInt8(97 + ($0 + index) % 26))) })
            sample.string = index % 17 == 0 ? text + "é" : text
            sample.data = Data((0..<(index * 11 % 45)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) })
            sample.optionalString = index % 5 == 0 ? nil : String(text.reversed())
        }
        try context.save()
        let state = container.store.state.withLock { $0 }
        #expect(state.digest(model: TestModels.samples) == Self.rowDigest(of: state, model: TestModels.samples))
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

    /// The digest is the sum of every object's chain, each mixed, then the sum and the object count hashed after the
    /// definition's number (2) and mixed: written out here so that a change of the definition fails a test. The sum
    /// is the same in any order and in parts joined.
    @Test func theDigestIsTheMixedSumOfTheMixedObjects() {
        func mix(_ value: UInt128) -> UInt128 {
            var x = value
            x ^= x >> 64
            x &*= 0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835
            x ^= x >> 67
            x &*= 0xC2B2_AE3D_27D4_EB4F_1656_67B1_9E37_79F9
            return x ^ (x >> 64)
        }
        let objects = (0..<5).map { index -> DigestHasher in
            var hasher = DigestHasher()
            hasher.combine(integer: UInt64(index) * 0x9E37_79B9)
            hasher.combine(string: "object \(index)")
            return hasher
        }
        var total: UInt128 = 0
        for object in objects { total &+= mix(object.state) }
        var final = DigestHasher()
        for word in [2, 5, UInt64(truncatingIfNeeded: total), UInt64(truncatingIfNeeded: total >> 64)] {
            final.combine(integer: word)
        }
        var sum = DigestSum()
        for object in objects { sum.add(object: object) }
        #expect(sum.objectCount == 5)
        #expect(sum.digest.value == mix(final.state))
        var first = DigestSum()
        var second = DigestSum()
        for object in objects.reversed().prefix(2) { first.add(object: object) }
        for object in objects.reversed().dropFirst(2) { second.add(object: object) }
        first.add(second)
        #expect(first == sum)
        // Without objects: no sum, no count.
        #expect(DigestSum().digest.description == "de940fd4e0d48fa5d98e4a65b32f3239")
    }

    /// A sum of object hashes must still tell apart states whose objects swap values, or whose to-many targets move
    /// from one object to another: each value is hashed inside its object's chain, after the object's key.
    @Test func statesWhoseObjectsSwapValuesDiffer() throws {
        func digest(codes: [String], courseOfLesson: Int) throws -> StateDigest {
            let directory = TemporaryDirectory()
            let container = try ModelContainer(path: directory.file(), model: TestModels.school)
            let context = container.newBackgroundContext()
            var courses: [Course] = []
            for code in codes {
                let course = Course()
                context.insert(course)
                course.code = code
                courses.append(course)
            }
            let lesson = Lesson()
            context.insert(lesson)
            lesson.title = "L"
            lesson.course = courses[courseOfLesson]
            try context.save()
            defer { try? container.close() }
            return try container.stateDigest()
        }
        let base = try digest(codes: ["A", "B"], courseOfLesson: 0)
        #expect(try digest(codes: ["A", "B"], courseOfLesson: 0) == base)
        #expect(try digest(codes: ["B", "A"], courseOfLesson: 0) != base)
        #expect(try digest(codes: ["A", "B"], courseOfLesson: 1) != base)
        #expect(try digest(codes: ["A", "C"], courseOfLesson: 0) != base)
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
