import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// A replayed transaction is applied to the columns in place (an update writes the columns it changes, a relate
/// edits its list where it is); the state must be the one staging and installing the transaction builds, as a
/// commit does: same rows, versions, slots, indexes, anomalies and digest.
@Suite("Replaying in place builds the state staging builds")
struct InPlaceReplayTests {
    static let model = TestModels.school

    /// Seeded random changesets over the school model: inserts, updates, relates (lists past the length that gets
    /// an array of its own, and back), deletes, and — when `faulty` — operations that do not fit (unknown objects,
    /// entities, properties and stores; an object deleted and touched again in the same transaction).
    struct Workload {
        var random: SeededGenerator
        let faulty: Bool
        var nextKey: UInt64 = 1
        var transactionID: UInt64 = 0
        /// The objects the generator believes live, by entity name.
        var live: [String: [UInt64]] = [:]

        init(seed: UInt64, faulty: Bool) {
            random = SeededGenerator(seed: seed)
            self.faulty = faulty
        }

        func entity(_ name: String) -> UInt32 {
            UInt32(InPlaceReplayTests.model.entities.first { $0.name == name }!.index)
        }
        func property(_ name: String, of entity: String) -> UInt32 {
            UInt32(
                InPlaceReplayTests.model.entities[Int(self.entity(entity))].properties.firstIndex { $0.name == name }!)
        }
        func reference(_ entity: String, _ key: UInt64) -> ObjectReference {
            ObjectReference(entityIndex: self.entity(entity), key: key)
        }

        mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }

        mutating func someLive(_ name: String) -> UInt64? {
            guard let keys = live[name], !keys.isEmpty else { return nil }
            return keys[below(keys.count)]
        }

        mutating func value(of entity: String) -> [PropertyChange] {
            switch entity {
            case "Student", "Teacher":
                var changes = [
                    PropertyChange(
                        propertyIndex: property("name", of: entity), value: .attribute(.string("name \(below(12))")))
                ]
                if entity == "Student" && below(2) == 0 {
                    changes.append(
                        PropertyChange(
                            propertyIndex: property("year", of: entity), value: .attribute(.int16(Int16(below(6))))))
                }
                return changes
            case "Course":
                return [
                    PropertyChange(
                        propertyIndex: property("code", of: entity), value: .attribute(.string("C\(below(9))"))),
                    PropertyChange(
                        propertyIndex: property("credits", of: entity), value: .attribute(.int32(Int32(below(30))))),
                ]
            case "Lesson":
                var changes = [
                    PropertyChange(
                        propertyIndex: property("title", of: entity), value: .attribute(.string("lesson \(below(50))")))
                ]
                if let course = someLive("Course") {
                    changes.append(
                        PropertyChange(
                            propertyIndex: property("course", of: entity), value: .toOne(reference("Course", course))))
                }
                return changes
            default:
                return [
                    PropertyChange(
                        propertyIndex: property("text", of: entity),
                        value: .attribute(.string(String(repeating: "note ", count: 1 + below(40))))),
                    PropertyChange(propertyIndex: property("course", of: entity), value: .toOne(nil)),
                ]
            }
        }

        mutating func next() -> Changeset {
            transactionID += 1
            var operations: [ChangeOperation] = []
            var foreignStores: [LogUUID] = []
            let entities = ["Student", "Teacher", "Course", "Lesson", "Note"]
            let count = below(10) == 0 ? 60 + below(120) : 1 + below(8)
            for _ in 0..<count {
                let kind = below(faulty ? 14 : 10)
                let name = entities[below(entities.count)]
                switch kind {
                case 0, 1, 2:
                    let key = nextKey
                    nextKey += 1
                    live[name, default: []].append(key)
                    operations.append(.insert(reference(name, key), value(of: name)))
                case 3, 4:
                    guard let key = someLive(name) else { continue }
                    var changes = value(of: name)
                    changes.removeLast(below(changes.count))
                    operations.append(.update(reference(name, key), changes))
                case 5, 6, 7:
                    // Members of a course (persons), lessons of a course, or courses of a student.
                    if below(3) < 2, let course = someLive("Course") {
                        let memberKind = below(2) == 0 ? "Student" : "Teacher"
                        let pool = live[memberKind] ?? []
                        let added = (0..<below(min(pool.count, 90) + 1)).map { _ in
                            reference(memberKind, pool[below(pool.count)])
                        }
                        let removed = (0..<below(min(pool.count, 8) + 1)).map { _ in
                            reference(memberKind, pool[below(pool.count)])
                        }
                        operations.append(
                            .relate(
                                reference("Course", course), propertyIndex: property("members", of: "Course"),
                                added: added, removed: removed))
                    } else if let student = someLive("Student"), let course = someLive("Course") {
                        operations.append(
                            .relate(
                                reference("Student", student), propertyIndex: property("courses", of: "Student"),
                                added: below(3) == 0 ? [] : [reference("Course", course)],
                                removed: below(3) == 0 ? [reference("Course", course)] : []))
                    }
                case 8, 9:
                    guard below(3) == 0, var keys = live[name], !keys.isEmpty else { continue }
                    let key = keys.remove(at: below(keys.count))
                    live[name] = keys
                    operations.append(.delete(reference(name, key)))
                case 10:
                    // An object touched after its delete, or deleted after its insert, in the same transaction.
                    guard let key = someLive(name) else { continue }
                    operations.append(.delete(reference(name, key)))
                    operations.append(
                        below(2) == 0
                            ? .update(reference(name, key), value(of: name))
                            : .insert(reference(name, key), value(of: name)))
                case 11:
                    // Unknown objects and properties, and a relate through an attribute.
                    let key = below(2) == 0 ? nextKey + 1000 : (someLive(name) ?? 1)
                    operations.append(
                        .update(
                            reference(name, key),
                            [PropertyChange(propertyIndex: 40, value: .attribute(.int64(1)))] + value(of: name)))
                    operations.append(
                        .relate(
                            reference(name, someLive(name) ?? key), propertyIndex: 0,
                            added: [reference("Course", 1)], removed: []))
                case 12:
                    // An unknown entity and another store's object.
                    operations.append(.update(ObjectReference(entityIndex: 77, key: 5), []))
                    foreignStores = [LogUUID(bytes: (0..<16).map { UInt8($0) })]
                    operations.append(
                        .delete(ObjectReference(storeIndex: 1, entityIndex: entity(name), key: someLive(name) ?? 3)))
                default:
                    // An insert of an object that exists, and an object of one entity touched as another.
                    guard let key = someLive(name) else { continue }
                    operations.append(.insert(reference(name, key), value(of: name)))
                    let other = entities[below(entities.count)]
                    operations.append(.update(reference(other, key), value(of: other)))
                }
            }
            return Changeset(
                transactionID: transactionID, commitTimeMicroseconds: Int64(transactionID) * 1000, author: "random",
                nextKey: nextKey, foreignStores: foreignStores, operations: operations)
        }
    }

    /// Everything of a state the two ways must agree on, slots and versions included.
    static func snapshot(of state: StoreState) -> [String] {
        var lines: [String] = []
        for entityIndex in model.entities.indices {
            let table = state.version(ofEntity: entityIndex)
            lines.append("entity \(entityIndex): \(table.count) objects, \(table.slotCount) slots")
            table.forEachLiveSlot { chunk, position, slot in
                let row = chunk.row(at: position, entityIndex: entityIndex)
                lines.append("\(slot) key \(row.key) v\(row.version) \(Array(row.values))")
            }
            lines.append("indexes \(state.indexes[entityIndex])")
        }
        lines.append("unique \(state.uniqueIndex.sorted { "\($0.key)" < "\($1.key)" })")
        lines.append("counters \(state.lastTransactionID) \(state.nextKey) \(state.lastCommitTimeMicroseconds)")
        return lines
    }

    /// A school schema frame whose default for Student.year is `year` (defaults may change mid-log; the shape not).
    static func schema(yearDefault year: Int16) -> SchemaPayload {
        var schema = model.schema
        let student = schema.entities.firstIndex { $0.name == "Student" }!
        for (index, property) in schema.entities[student].properties.enumerated() {
            if case .attribute(var attribute) = property, attribute.name == "year" {
                attribute.defaultValue = .int16(year)
                schema.entities[student].properties[index] = .attribute(attribute)
            }
        }
        return schema
    }

    /// Records of a random log: schema frames (defaults changed mid-way), transactions, and checkpoints of the
    /// state reached (ordinary chunks) followed by more transactions.
    static func records(seed: UInt64, faulty: Bool, transactions: Int) -> [ReplayRecord] {
        var workload = Workload(seed: seed, faulty: faulty)
        var records: [ReplayRecord] = [.schema(model.schema)]
        // A reference replay, to write checkpoints of the state reached.
        var reference = Replayer(
            model: nil, untilTransaction: nil, policy: .tolerant, source: "random", appliesInPlace: false)
        try! reference.consume(records[0])
        for index in 1...transactions {
            let record: ReplayRecord
            if index % 97 == 0 {
                record = .schema(schema(yearDefault: Int16(index % 5)))
            } else if index % 151 == 0, let state = reference.state, let model = reference.model {
                let begin = CheckpointBegin(
                    lastTransactionID: state.lastTransactionID,
                    lastCommitTimeMicroseconds: state.lastCommitTimeMicroseconds, nextKey: state.nextKey,
                    objectCount: UInt64(state.objectCount))
                var checkpoint: [ReplayRecord] = [.checkpointBegin(begin)]
                state.forEachCheckpointChunk(model: model, recordsPerChunk: 50) {
                    checkpoint.append(.checkpointChunk($0))
                }
                checkpoint.append(.checkpointEnd(CheckpointEnd(objectCount: begin.objectCount, stateDigest: [])))
                for record in checkpoint { try! reference.consume(record) }
                records += checkpoint
                continue
            } else {
                record = .transaction(ReplayChangeset(workload.next()), blobHandles: [])
            }
            try! reference.consume(record)
            records.append(record)
        }
        return records
    }

    @Test(
        "the tools' tolerant replay, operations that do not fit included: same state, anomalies and digest",
        arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func tolerant(seed: UInt64) throws {
        let records = Self.records(seed: seed, faulty: true, transactions: 400)
        for buildsIndexes in [false, true] {
            var inPlace = Replayer(
                model: nil, untilTransaction: nil, policy: .tolerant, buildsIndexes: buildsIndexes, source: "random")
            var staged = Replayer(
                model: nil, untilTransaction: nil, policy: .tolerant, buildsIndexes: buildsIndexes, source: "random",
                appliesInPlace: false)
            for record in records {
                try inPlace.consume(record)
                try staged.consume(record)
            }
            let (a, b) = (try #require(inPlace.state), try #require(staged.state))
            #expect(inPlace.anomalies == staged.anomalies)
            #expect(inPlace.anomalies.count > 10, "the workload has operations that do not fit")
            #expect(Self.snapshot(of: a) == Self.snapshot(of: b))
            #expect(a.digest(model: inPlace.model!) == b.digest(model: staged.model!))
        }
    }

    @Test(
        "the library's strict replay with its indexes: same state and digest",
        arguments: [11, 12, 13, 14] as [UInt64])
    func strict(seed: UInt64) throws {
        let records = Self.records(seed: seed, faulty: false, transactions: 400)
        var inPlace = Replayer(model: Self.model, untilTransaction: nil, policy: .strict, source: "random")
        var staged = Replayer(
            model: Self.model, untilTransaction: nil, policy: .strict, source: "random", appliesInPlace: false)
        for record in records {
            try inPlace.consume(record)
            try staged.consume(record)
        }
        let (a, b) = (try #require(inPlace.state), try #require(staged.state))
        #expect(a.objectCount > 100)
        #expect(Self.snapshot(of: a) == Self.snapshot(of: b))
        #expect(a.digest(model: Self.model) == b.digest(model: Self.model))
    }

    @Test("a strict replay refuses an operation that does not fit with the same error either way")
    func strictErrors() throws {
        let update = Changeset(
            transactionID: 1, commitTimeMicroseconds: 0, author: "", nextKey: 10,
            operations: [.update(ObjectReference(entityIndex: 0, key: 9), [])])
        for appliesInPlace in [true, false] {
            var replayer = Replayer(
                model: Self.model, untilTransaction: nil, policy: .strict, source: "crafted.eglog",
                appliesInPlace: appliesInPlace)
            try replayer.consume(.schema(Self.model.schema))
            let name = Self.model.entities[0].name
            #expect {
                try replayer.consume(.transaction(ReplayChangeset(update), blobHandles: []))
            } throws: { error in
                "\(error)" == "crafted.eglog: transaction 1 updates \(name) 9, which does not exist"
            }
        }
    }

    /// A store with a compacted checkpoint (entity chunks that stay on disk) and a random tail of saves, opened by
    /// the library (in place) and replayed record by record the staged way: same state.
    @Test("a checkpoint's lazily loaded chunks and a tail of saves: same state as the staged replay")
    func checkpointAndTail() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        _ = try CheckpointChunkLayoutTests.compactedStore(at: path, studentCount: 9_000)
        do {
            let container = try ModelContainer(path: path, model: Self.model)
            let context = container.newBackgroundContext()
            var random = SeededGenerator(seed: 99)
            let students = try context.fetch(FetchDescriptor<Student>())
            let courses = try context.fetch(FetchDescriptor<Course>())
            for round in 0..<120 {
                let student = students[Int(random.next() % UInt64(students.count))]
                switch round % 4 {
                case 0: student.name = "renamed \(round)"
                case 1: student.courses.insert(courses[round % courses.count])
                case 2: student.year = Int16(round % 7)
                default:
                    let new = Student()
                    context.insert(new)
                    new.name = "new \(round)"
                    new.courses = [courses[0]]
                }
                try context.save()
            }
            try container.close()
        }
        let container = try ModelContainer(path: path, model: Self.model)
        defer { try? container.close() }
        let opened = container.store.state.withLock { $0 }
        var staged = Replayer(
            model: Self.model, untilTransaction: nil, policy: .strict, source: path, appliesInPlace: false)
        let reader = try LogReader(path: path)
        try reader.scan(defersEntityChunkBodies: true) { record in
            let converted = try FileBackend.convert(record) { () throws(LogFormatError) -> LogReader in reader }
            if let converted {
                try staged.consume(converted)
            }
        }
        let replayed = try #require(staged.state)
        #expect(Self.snapshot(of: opened) == Self.snapshot(of: replayed))
        #expect(opened.digest(model: Self.model) == replayed.digest(model: Self.model))
    }
}
