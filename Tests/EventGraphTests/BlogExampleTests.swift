import EventGraph
import EventGraphExamples
import Foundation
import Testing

@Suite("Seed 000: the blog library")
struct BlogExampleTests {
    static let author = AuthorRecord(identity: 7, name: "Qingwei", email: "q@example.com")

    @Test func insertFindOrCreateDeleteAndReopen() throws {
        let directory = TemporaryDirectory()
        do {
            let container = try BlogLibrary.open(path: directory.file())
            let context = container.newBackgroundContext()
            try BlogLibrary.post(
                with: PostRecord(
                    identity: 1, title: "Hello", author: Self.author, tags: ["swift", "linux"], categories: ["news"]),
                in: context)
            try BlogLibrary.post(
                with: PostRecord(
                    identity: 2, title: "Logs", author: Self.author, tags: ["swift"], categories: ["tech"]),
                in: context)
            try context.save()
            // The same identity again updates the existing post instead of inserting a second one.
            try BlogLibrary.post(
                with: PostRecord(
                    identity: 1, title: "Hello again", author: Self.author, tags: ["swift"], categories: ["news"]),
                in: context)
            try context.save()
            try container.close()
        }
        do {
            let container = try BlogLibrary.open(path: directory.file())
            let context = container.newBackgroundContext()
            let posts = try BlogLibrary.allPosts(in: context)
            #expect(posts.map(\.title) == ["Logs", "Hello again"])
            let author = try #require(posts.first?.authoredBy)
            #expect(author.posts.count == 2)
            let swift = try #require(
                try context.fetch(FetchDescriptor<EventGraphExamples.Tag>(filter: .equal("name", .string("swift"))))
                    .first)
            #expect(swift.posts.count == 2)
            #expect(try context.fetchCount(FetchDescriptor<EventGraphExamples.Tag>()) == 2)
            #expect(try BlogLibrary.deletePost(identity: 1, in: context))
            try context.save()
            #expect(swift.posts.map(\.identity) == [2])
            try container.close()
        }
        let container = try BlogLibrary.open(path: directory.file())
        let context = container.newBackgroundContext()
        #expect(try BlogLibrary.allPosts(in: context).map(\.identity) == [2])
        let author = try #require(try context.fetch(FetchDescriptor<Author>()).first)
        #expect(author.posts.map(\.title) == ["Logs"])
        context.delete(author)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Post>()) == 0, "deleting an author cascades to the posts")
        try container.close()
    }
}

@Suite("Seed 004: PhotoLocations")
struct PhotoLocationsExampleTests {
    @Test func addAndDeleteEvents() throws {
        let directory = TemporaryDirectory()
        do {
            let container = try PhotoLocations.open(path: directory.file())
            let context = container.newBackgroundContext()
            let date = Date(timeIntervalSinceReferenceDate: 1000)
            PhotoLocations.addEvent(
                latitude: 1, longitude: 2, image: .filled(width: 64, height: 48, level: 9), at: date, in: context)
            PhotoLocations.addEvent(latitude: 3, longitude: 4, image: nil, at: date.addingTimeInterval(60), in: context)
            try context.save()
            try container.close()
        }
        let container = try PhotoLocations.open(path: directory.file())
        let context = container.newBackgroundContext()
        let events = try PhotoLocations.events(in: context)
        #expect(events.map(\.latitude) == [3, 1])
        #expect(events[1].thumbnail == Image.filled(width: 16, height: 12, level: 9))
        #expect(events[0].photo == nil)
        context.delete(events[1])
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Photo>()) == 0, "deleting an event deletes its photo")
        let invalid = PhotoLocations.addEvent(latitude: 100, longitude: 0, image: nil, in: context)
        let error = try #require(throws: EventGraphError.self) { try context.save() }
        #expect(error.failures.first?.propertyName == "latitude")
        invalid.latitude = 10
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Event>()) == 2)
        try container.close()
    }
}
