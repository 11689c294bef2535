// A second launch of an app, for tests that must cross a process boundary (a model's dynamic defaults are computed
// once per process). Not a product: `swift build` builds it for the tests only.
//
//   StoreProbe write-dynamic|read-dynamic|write-photos|read-photos PATH
//
// Each command prints one line per object (its values) and exits 0, or prints the error and exits 1.
import EventGraph
import EventGraphExamples
import Foundation

/// One attribute of every type whose default is computed anew for each object.
final class DynamicDefaults: ManagedObject {
    @Attribute var int16 = Int16.random(in: .min ... .max)
    @Attribute var int32 = Int32.random(in: .min ... .max)
    @Attribute var int64 = Int64.random(in: .min ... .max)
    @Attribute var double = Double.random(in: -1e9...1e9)
    @Attribute var float = Float.random(in: -1e9...1e9)
    @Attribute var bool = Bool.random()
    @Attribute var string = UUID().uuidString
    @Attribute var date = Date()
    @Attribute var uuid = UUID()
    @Attribute var url = URL(string: "https://example.com/\(UUID().uuidString)")!
    @Attribute var decimal = Decimal(Int.random(in: 0 ... .max)) / 1000
    @Attribute var data = Data(UUID().uuidString.utf8)
    @Attribute var optionalDate: Date? = Date()

    var line: String {
        "\(int16) \(int32) \(int64) \(double) \(float) \(bool) \(string) \(date.timeIntervalSinceReferenceDate) "
            + "\(uuid) \(url) \(decimal) \(data.base64EncodedString()) "
            + "\(optionalDate.map { "\($0.timeIntervalSinceReferenceDate)" } ?? "nil")"
    }
}

func run(_ command: String, path: String) throws {
    switch command {
    case "write-dynamic", "read-dynamic":
        let model = try ObjectModel(name: "Dynamic", version: "1", types: [DynamicDefaults.self])
        let container = try ModelContainer(path: path, model: model)
        let context = container.newBackgroundContext()
        if command == "write-dynamic" {
            context.insert(DynamicDefaults())
            try context.save()
        }
        for object in try context.fetch(FetchDescriptor<DynamicDefaults>()) { print(object.line) }
        try container.close()
    case "write-photos", "read-photos":
        let container = try PhotoLocations.open(path: path)
        let context = container.newBackgroundContext()
        if command == "write-photos" {
            PhotoLocations.addEvent(
                latitude: 48.85, longitude: 2.35, image: .filled(width: 64, height: 64, level: 7), in: context)
            let plain = Event()
            context.insert(plain)  // keeps its default time stamp, the `Date()` of this process
            try context.save()
        }
        for event in try PhotoLocations.events(in: context) {
            print(
                "\(event.timeStamp.timeIntervalSinceReferenceDate) \(event.latitude) \(event.longitude) "
                    + "\(event.photo?.image?.pixels.count ?? 0)")
        }
        try container.close()
    default:
        throw EventGraphError(.invalidArgument, "unknown command '\(command)'")
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: StoreProbe COMMAND PATH\n".utf8))
    exit(2)
}
do {
    try run(arguments[1], path: arguments[2])
} catch {
    print("error: \(error)")
    exit(1)
}
