import EventGraphExamples
import Foundation
import Testing

@testable import EventGraph

/// An object refers to its entity without owning it (see `ManagedObject.entityStorage`): whatever the object depends
/// on keeps the entity's model alive — its context while it belongs to one, its detachment once it left it — and a
/// rollback of its insert clears the reference. These tests free everything else (a model of their own, not a shared
/// static one) and check that the entity is still there for as long as an object can read it, and goes with it.
@Suite("Objects refer to their entity while something keeps its model alive")
struct EntityReferenceTests {
    /// A container of a model of its own (not the shared static one), holding posts 1 to `count`, saved.
    static func blog(posts count: Int) throws -> ModelContainer {
        let model = try ObjectModel(
            name: "Blog", version: "1", types: [Author.self, Post.self, Tag.self, Category.self])
        return try ContextReferenceTests.blog(posts: count, model: model)
    }

    @Test func anObjectHeldPastItsContainerKeepsItsEntity() throws {
        weak var weakModel: ObjectModel?
        weak var weakEntity: EntityDescription?
        var post: Post?
        do {
            let container = try Self.blog(posts: 3)
            weakModel = container.model
            let context = container.newBackgroundContext()
            let posts = try context.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.identity)]))
            post = posts[1]
            weakEntity = post!.entity
            _ = post!.title
            try container.close()
        }
        // The context and the container are gone; the object's detachment keeps the model, and so the entity.
        #expect(post!.context == nil)
        #expect(weakModel != nil && weakEntity != nil)
        #expect(post!.entity.name == "Post")
        #expect(post!.objectID.entityName == "Post" && post!.objectID.key == 2)
        #expect(post!.description.contains("context was released"))
        #expect(post!.title == "post 2", "a value read before still reads")
        post = nil
        #expect(weakModel == nil && weakEntity == nil, "the last object that needed the model let it go")
    }

    @Test func objectsAResetOrASaveDetachesKeepTheirEntity() throws {
        weak var weakEntity: EntityDescription?
        var reset: Post?
        var deleted: Post?
        do {
            let container = try Self.blog(posts: 3)
            let context = container.newBackgroundContext()
            let posts = try context.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.identity)]))
            weakEntity = posts[0].entity
            deleted = posts[2]
            context.delete(posts[2])
            try context.save()
            reset = posts[0]
            context.reset()
            try container.close()
        }
        #expect(weakEntity != nil)
        #expect(reset!.objectID.entityName == "Post" && deleted!.objectID.entityName == "Post")
        #expect(reset!.description.contains("deleted or reset") && deleted!.description.contains("deleted or reset"))
        reset = nil
        deleted = nil
        #expect(weakEntity == nil)
    }

    @Test func aRolledBackInsertLeavesWithoutItsEntity() throws {
        weak var weakModel: ObjectModel?
        var post: Post?
        do {
            let container = try Self.blog(posts: 1)
            weakModel = container.model
            let context = container.newBackgroundContext()
            post = Post()
            context.insert(post!)
            post!.title = "never saved"
            #expect(post!.entityStorage === container.model.entity(named: "Post"))
            context.rollback()
            try container.close()
        }
        // Nothing keeps the model for a rolled-back object, so it no longer refers to the entity.
        #expect(weakModel == nil, "a rolled-back object does not keep the model")
        #expect(post!.entityStorage == nil && post!.context == nil)
        #expect(post!.title == "Untitled", "a dead object reads its class's defaults")
        #expect(post!.description.contains("deleted or reset"))
    }

    @Test func aFetchOfAFamilyGivesEachObjectItsOwnEntity() throws {
        // A fetch takes the fetched entity from its plan and a sub-entity's from the model.
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let setup = container.newBackgroundContext()
        let student = Student()
        setup.insert(student)
        student.name = "Bo"
        let teacher = Teacher()
        setup.insert(teacher)
        teacher.name = "Ann"
        try setup.save()
        let context = container.newBackgroundContext()
        let fetched = try context.fetch(FetchDescriptor<Person>(sortBy: [SortDescriptor(\.name)]))
        #expect(fetched.map(\.entity.name) == ["Teacher", "Student"])
        #expect(fetched[0] is Teacher && fetched[1] is Student)
        let students = try context.fetch(FetchDescriptor<Student>())
        #expect(students.map(\.entity.name) == ["Student"] && students[0] === fetched[1])
    }

    @Test func anUnfilteredFetchCollectsItsResultsWithoutGrowingThem() throws {
        let container = try Self.blog(posts: 1000)
        let context = container.newBackgroundContext()
        let posts = try context.fetch(FetchDescriptor<Post>())
        #expect(posts.count == 1000)
        // Reserved once for the scanned rows (room for 1,001 here); grown by doubling it had room for 1,023.
        #expect(posts.capacity <= 1008)
    }
}

/// A property read checks `ManagedObject.hasPendingValues`, which the observer of `pending` keeps, instead of
/// `pending.isEmpty` (see the field): it must follow every way the unsaved values change.
@Suite("The pending-values flag follows the unsaved values")
struct PendingValuesFlagTests {
    @Test func theFlagFollowsSetsSavesRefreshesAndRollbacks() throws {
        let container = try EntityReferenceTests.blog(posts: 2)
        let context = container.newBackgroundContext()
        let posts = try context.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.identity)]))
        let post = posts[0]
        #expect(!post.hasPendingValues && post.title == "post 1")
        post.title = "changed"
        #expect(post.hasPendingValues && post.title == "changed")
        context.refresh(post)
        #expect(!post.hasPendingValues && post.title == "post 1", "a refresh discards the change")
        post.title = "kept"
        context.refresh(post, mergeChanges: true)
        #expect(post.hasPendingValues && post.title == "kept")
        try context.save()
        #expect(!post.hasPendingValues && post.title == "kept")
        post.body = "unsaved"
        context.rollback()
        #expect(!post.hasPendingValues && post.body == "")
        // A to-many edited in place (the inverse of a relationship set on the other side).
        let tag = Tag()
        context.insert(tag)
        tag.name = "swift"
        #expect(tag.hasPendingValues)
        post.tags = [tag]
        #expect(post.hasPendingValues && tag.posts == [post])
        posts[1].tags = [tag]
        #expect(tag.posts == [post, posts[1]] && posts[1].hasPendingValues)
        try context.save()
        #expect(!post.hasPendingValues && !tag.hasPendingValues && !posts[1].hasPendingValues)
        #expect(post.tags == [tag] && tag.posts.count == 2)
        context.reset()
        #expect(!post.hasPendingValues)
    }
}
