import EventGraph
import EventGraphExamples
import Foundation
import LogFormat
import Testing

/// Compaction moves every externally stored value to a new file; an object that read its row before must still
/// read a real value afterwards (the one it saw, or the store's newer one), never the bytes at a stale offset.
@Suite("External values read after a compaction")
struct ExternalValueCompactionTests {
    private let old = Image.filled(width: 48, height: 48, level: 1)
    private let new = Image.filled(width: 48, height: 48, level: 2)

    /// A store with one event whose photo holds `old`, and a context holding that photo's row unread.
    private func storeWithAFetchedPhoto(_ directory: TemporaryDirectory) throws -> (
        ModelContainer, ObjectContext, Photo
    ) {
        let container = try PhotoLocations.open(path: directory.file())
        let setup = container.newBackgroundContext()
        PhotoLocations.addEvent(latitude: 1, longitude: 1, image: old, in: setup)
        try setup.save()
        let reader = container.newBackgroundContext()
        let photo = try #require(try reader.fetch(FetchDescriptor<Photo>()).first)
        #expect(!photo.isExternalValueLoaded(forKey: "image"))
        return (container, reader, photo)
    }

    @Test func aPhotoReplacedAndCompactedAwayReadsTheStoresNewImage() throws {
        let directory = TemporaryDirectory()
        let (container, reader, photo) = try storeWithAFetchedPhoto(directory)
        let writer = container.newBackgroundContext()
        let event = try #require(try PhotoLocations.events(in: writer).first)
        PhotoLocations.setImage(new, of: event, in: writer)
        try writer.save()
        try container.compact()
        #expect(level(of: photo.image) == 2)
        #expect(photo.context === reader)
        #expect(try GraphIntegrity.issues(container) == [])
        try container.close()
    }

    @Test func aPhotoDeletedAndCompactedAwayReadsAsDeleted() throws {
        let directory = TemporaryDirectory()
        let (container, reader, photo) = try storeWithAFetchedPhoto(directory)
        let writer = container.newBackgroundContext()
        let event = try #require(try PhotoLocations.events(in: writer).first)
        PhotoLocations.deleteImage(of: event, in: writer)
        try writer.save()
        try container.compact()
        #expect(photo.image == nil, "an object deleted in the store reads as its defaults, as a fault would")
        #expect(photo.context === reader)
        try container.close()
    }

    @Test func aViewOpenedBeforeACompactionKeepsReadingItsOwnFile() throws {
        let directory = TemporaryDirectory()
        let (container, _, _) = try storeWithAFetchedPhoto(directory)
        let view = try container.view(asOfTransaction: container.lastTransactionID)
        let viewContext = view.newBackgroundContext()
        let viewed = try #require(try viewContext.fetch(FetchDescriptor<Photo>()).first)
        let writer = container.newBackgroundContext()
        PhotoLocations.setImage(new, of: try #require(try PhotoLocations.events(in: writer).first), in: writer)
        try writer.save()
        try container.compact()
        #expect(
            level(of: viewed.image) == 1, "a view is the store as of its transaction, even after the file is rewritten")
        try container.close()
    }

    /// Compactions run while another thread reads photos: each read is one of the images ever saved.
    @Test func readsRacingCompactionsSeeOnlySavedImages() throws {
        let directory = TemporaryDirectory()
        let container = try PhotoLocations.open(path: directory.file())
        let setup = container.newBackgroundContext()
        PhotoLocations.addEvent(latitude: 1, longitude: 1, image: old, in: setup)
        try setup.save()
        let rounds = 40
        let images = (0...rounds).map { Image.filled(width: 48, height: 48, level: UInt8($0)) }
        let wrong = LockedValue<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            let context = container.newBackgroundContext(name: "worker \(worker)")
            do {
                for round in 1...rounds {
                    if worker == 0 {
                        let event = try #require(try PhotoLocations.events(in: context).first)
                        PhotoLocations.setImage(images[round], of: event, in: context)
                        try context.save()
                        try container.compact()
                        continue
                    }
                    for photo in try context.fetch(FetchDescriptor<Photo>()) {
                        let image = photo.image
                        if !images.contains(where: { $0 == image }) {
                            wrong.withLock {
                                $0.append("round \(round): read level \(String(describing: level(of: image)))")
                            }
                        }
                    }
                }
            } catch {
                wrong.withLock { $0.append("worker \(worker): \(error)") }
            }
        }
        #expect(wrong.withLock { $0 } == [])
        try container.close()
    }

    /// The grey level of a solid image; `nil` for no image or one that is not solid (garbage).
    private func level(of image: Image?) -> UInt8? {
        guard let image, let first = image.pixels.first, image.pixels.allSatisfy({ $0 == first }) else { return nil }
        return first
    }
}
