import EventGraph
import EventGraphExamples
import Foundation
import Testing

/// An object refers to its context without owning it, and without a `weak` reference (see
/// `ManagedObject.contextStorage`): every way out of a context clears the reference, so that it never outlives the
/// context. These tests follow each way out and then release the context.
@Suite("Objects refer to their context until they leave it")
struct ContextReferenceTests {
    /// A container of `model` (the blog's) holding posts 1 to `count`, saved.
    static func blog(posts count: Int, model: ObjectModel = BlogLibrary.model) throws -> ModelContainer {
        let container = try ModelContainer(inMemoryWith: model)
        let setup = container.newBackgroundContext()
        for identity in 1...count {
            let post = Post()
            setup.insert(post)
            post.identity = Int64(identity)
            post.title = "post \(identity)"
        }
        try setup.save()
        return container
    }

    @Test func anObjectASaveDeletesLeavesItsContext() throws {
        let container = try Self.blog(posts: 3)
        var context: ObjectContext? = container.newBackgroundContext()
        let post = try #require(
            try context!.fetch(FetchDescriptor<Post>(predicate: #Predicate { $0.identity == 2 })).first)
        let id = post.objectID
        context!.delete(post)
        #expect(post.context === context)
        try context!.save()
        #expect(post.context == nil, "as in Core Data, a deleted object has no context after the save")
        #expect(post.isDeleted)
        context = nil
        #expect(post.objectID == id)
        #expect(post.description.contains("deleted"))
    }

    @Test func anObjectInsertedAndDeletedBeforeASaveLeavesWithTheSave() throws {
        let container = try Self.blog(posts: 1)
        var context: ObjectContext? = container.newBackgroundContext()
        let post = Post()
        context!.insert(post)
        let id = post.objectID
        context!.delete(post)
        try context!.save()
        #expect(post.context == nil)
        context = nil
        #expect(post.objectID.key == id.key, "its ID still reads once the context is gone")
    }

    @Test func anObjectAMergeFindsDeletedLeavesItsContext() throws {
        let container = try Self.blog(posts: 2)
        var merging: ObjectContext? = container.newBackgroundContext()
        merging!.automaticallyMergesChangesFromParent = true
        let posts = try merging!.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.identity)]))
        #expect(posts.count == 2)
        let other = container.newBackgroundContext()
        other.delete(try #require(other.object(with: posts[0].objectID)))
        try other.save()
        merging!.processPendingChanges()
        #expect(posts[0].isDeleted && posts[0].context == nil)
        #expect(posts[1].context === merging)
        merging = nil
        #expect(posts[0].description.contains("deleted"))
        #expect(posts[1].context == nil && posts[1].description.contains("context was released"))
    }

    @Test func objectsHeldPastTheirContextLeaveItWhenItIsReleased() throws {
        let container = try Self.blog(posts: 300)
        var context: ObjectContext? = container.newBackgroundContext()
        let posts = try context!.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.identity)]))
        // Some objects are held past the context, the others go with it; some were read, some are still faults.
        let kept = stride(from: 0, to: posts.count, by: 7).map { posts[$0] }
        let ids = kept.map(\.objectID)
        for post in kept.prefix(10) { _ = post.title }
        let changed = kept[20]
        changed.title = "changed, never saved"
        withExtendedLifetime(posts) {}
        context = nil
        #expect(kept.allSatisfy { $0.context == nil })
        #expect(kept.map(\.objectID) == ids)
        #expect(kept.prefix(10).map(\.title) == kept.prefix(10).map { "post \($0.identity)" })
        #expect(changed.title == "changed, never saved")
        #expect(kept.allSatisfy { $0.description.contains("context was released") })
    }

    @Test func resetAndRollbackTakeObjectsOutOfTheContext() throws {
        let container = try Self.blog(posts: 2)
        var context: ObjectContext? = container.newBackgroundContext()
        let inserted = Post()
        context!.insert(inserted)
        context!.rollback()
        #expect(inserted.context == nil)
        let fetched = try context!.fetch(FetchDescriptor<Post>())
        context!.reset()
        #expect(fetched.allSatisfy { $0.context == nil })
        context = nil
        #expect(fetched.allSatisfy { $0.isDeleted })
    }
}
