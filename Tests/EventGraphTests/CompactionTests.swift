import EventGraph
import EventGraphExamples
import Foundation
import Testing

@Suite("Compaction")
struct CompactionTests {
    @Test func compactionKeepsTheStateAndDropsHistory() throws {
        let directory = TemporaryDirectory()
        let digest: StateDigest
        do {
            let container = try PhotoLocations.open(path: directory.file())
            let context = container.newBackgroundContext()
            for index in 0..<20 {
                let image = Image.filled(width: 40, height: 40, level: UInt8(index))
                PhotoLocations.addEvent(latitude: Double(index), longitude: 0, image: image, in: context)
                try context.save()
            }
            for event in try PhotoLocations.events(in: context) where Int(event.latitude) % 2 == 0 {
                context.delete(event)
            }
            try context.save()
            let before = directory.byteCount()
            digest = try container.stateDigest()
            let report = try container.compact()
            #expect(report.stateDigest == digest)
            #expect(report.objectCount == 20)
            #expect(directory.byteCount() < before)
            // Saves continue after the rewrite, and external values still read.
            PhotoLocations.addEvent(
                latitude: 80, longitude: 0, image: .filled(width: 40, height: 40, level: 1), in: context)
            try context.save()
            let freshContext = container.newBackgroundContext()
            let fresh = try PhotoLocations.events(in: freshContext)
            let odd = try #require(fresh.first { $0.latitude == 1 })
            let photo = try #require(odd.photo)
            #expect(photo.value(forKey: "image") != .attribute(.null))
            #expect(photo.image?.pixels.first == 1)
            try container.close()
        }
        let container = try PhotoLocations.open(path: directory.file())
        let context = container.newBackgroundContext()
        let events = try PhotoLocations.events(in: context)
        #expect(events.count == 11)
        #expect(container.lastTransactionID == 22)
        #expect(events.first { $0.latitude == 3 }?.photo?.image == Image.filled(width: 40, height: 40, level: 3))
        for event in events where event.latitude == 80 { context.delete(event) }
        try context.save()
        #expect(try container.stateDigest() == digest)
        #expect(throws: EventGraphError.self) { try container.view(asOfTransaction: 5) }
        try container.close()
    }
}
