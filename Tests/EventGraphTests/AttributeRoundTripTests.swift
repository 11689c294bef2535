import EventGraph
import Foundation
import Testing

@Suite("Attribute values round-trip through save and reopen")
struct AttributeRoundTripTests {
    @Test func everyAttributeTypeSurvivesReopen() throws {
        let directory = TemporaryDirectory()
        let uuid = UUID()
        let large = Data((0..<500).map { UInt8($0 % 251) })
        do {
            let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
            let context = container.newBackgroundContext()
            let sample = Sample()
            context.insert(sample)
            sample.int16 = -12_345
            sample.int32 = 2_000_000_000
            sample.int64 = Int64.min + 1
            sample.double = 3.141592653589793
            sample.float = 2.5
            sample.bool = true
            sample.string = "héllo, wörld — 🌍"
            sample.date = Date(timeIntervalSinceReferenceDate: 123_456_789.123456)
            sample.uuid = uuid
            sample.url = URL(string: "https://example.org/a?b=c#d")!
            sample.decimal = Decimal(string: "12345678901234567890.123456789")!
            sample.data = Data([0, 1, 2, 255])
            sample.optionalString = "present"
            sample.optionalInt = 42
            sample.large = large
            sample.point = Point(x: 1.5, y: -2)
            sample.scratch = "transient"
            try context.save()
            #expect(sample.scratch == "transient", "a transient value stays in the object across a save")
            try container.close()
        }
        let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
        let context = container.newBackgroundContext()
        let sample = try #require(try context.fetch(FetchDescriptor<Sample>()).first)
        #expect(sample.int16 == -12_345)
        #expect(sample.int32 == 2_000_000_000)
        #expect(sample.int64 == Int64.min + 1)
        #expect(sample.double == 3.141592653589793)
        #expect(sample.float == 2.5)
        #expect(sample.bool == true)
        #expect(sample.string == "héllo, wörld — 🌍")
        #expect(sample.date == Date(timeIntervalSinceReferenceDate: 123_456_789.123456))
        #expect(sample.uuid == uuid)
        #expect(sample.url == URL(string: "https://example.org/a?b=c#d")!)
        #expect(sample.decimal == Decimal(string: "12345678901234567890.123456789")!)
        #expect(sample.data == Data([0, 1, 2, 255]))
        #expect(sample.optionalString == "present")
        #expect(sample.optionalInt == 42)
        #expect(sample.large == large)
        #expect(sample.point == Point(x: 1.5, y: -2))
        #expect(sample.scratch == "", "transient values are never written to the log")
        try container.close()
    }

    @Test func defaultsAndNilsSurviveReopen() throws {
        let directory = TemporaryDirectory()
        do {
            let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
            let context = container.newBackgroundContext()
            let sample = Sample()
            context.insert(sample)
            sample.optionalString = "x"
            sample.optionalString = nil
            try context.save()
            try container.close()
        }
        let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
        let sample = try #require(try container.newBackgroundContext().fetch(FetchDescriptor<Sample>()).first)
        #expect(sample.optionalString == nil)
        #expect(sample.optionalInt == nil)
        #expect(sample.string == "")
        #expect(sample.point == nil)
        #expect(sample.large == nil)
        try container.close()
    }

    @Test(arguments: [
        ("int16", StoredValue.int16(7)), ("int32", .int32(-7)), ("int64", .int64(1 << 40)), ("double", .double(0.1)),
        ("float", .float(0.25)), ("bool", .bool(true)), ("string", .string("dynamic")),
        ("date", .date(Date(timeIntervalSinceReferenceDate: 99.5))),
        ("uuid", .uuid(UUID(uuidString: "0123C0DE-4567-89AB-CDEF-0123456789AB")!)),
        ("url", .url("file:///tmp/x")), ("decimal", .decimal("1.5")), ("data", .binary([9, 8, 7])),
    ])
    func dynamicAPIRoundTripsEachType(name: String, value: StoredValue) throws {
        let directory = TemporaryDirectory()
        do {
            let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
            let context = container.newBackgroundContext()
            let sample = context.insert(entityNamed: "Sample")
            sample.setValue(.attribute(value), forKey: name)
            try context.save()
            try container.close()
        }
        // Opened without the application's classes: the model comes from the log.
        let container = try ModelContainer(path: directory.file())
        let context = container.newBackgroundContext()
        let objects = try context.fetch(FetchDescriptor(entityName: "Sample"))
        #expect(objects.count == 1)
        #expect(objects.first?.value(forKey: name) == .attribute(value))
        try container.close()
    }
}
