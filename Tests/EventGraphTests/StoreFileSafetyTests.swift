import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A store opened by another name is the same store (issue 9, items 2 and 3).
@Suite("Store by any name")
struct StoreByAnyNameTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file() }

    private func insertCourse(_ code: String, into container: ModelContainer) throws {
        let context = container.newBackgroundContext()
        let course = Course()
        context.insert(course)
        course.code = code
        try context.save()
    }

    private func codes(in container: ModelContainer) throws -> Set<String> {
        Set(try container.newBackgroundContext().fetch(FetchDescriptor<Course>()).map(\.code))
    }

    @Test("a second container on the same file through a symlink or a hard link is refused", arguments: [false, true])
    func secondContainerRefused(hardLink: Bool) throws {
        let container = try ModelContainer(path: path, model: TestModels.school)
        let alias = directory.file("alias.eglog")
        if hardLink {
            try FileManager.default.linkItem(atPath: path, toPath: alias)
        } else {
            try FileManager.default.createSymbolicLink(atPath: alias, withDestinationPath: path)
        }
        let error = #expect(throws: EventGraphError.self) {
            _ = try ModelContainer(path: alias, model: TestModels.school)
        }
        #expect(
            error?.message.contains("already open for writing in this process") == true, "\(String(describing: error))")
        // Read-only views take no lock.
        let view = try ModelContainer.view(path: alias, asOfTransaction: container.lastTransactionID)
        #expect(view.isReadOnly)
        try container.close()
        let second = try ModelContainer(path: alias, model: TestModels.school)
        try second.close()
    }

    @Test("compaction through a symlink rewrites the store the link points to and keeps the link")
    func compactThroughSymlink() throws {
        let link = directory.file("link.eglog")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        // Created through a dangling link: the store is created where the link points.
        let container = try ModelContainer(path: link, model: TestModels.school)
        try insertCourse("A1", into: container)
        try container.compact()
        try insertCourse("B2", into: container)
        try container.close()

        var info = stat()
        #expect(lstat(link, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK, "the link is still a link")
        let reopened = try ModelContainer(path: path, model: TestModels.school)
        #expect(try codes(in: reopened) == ["A1", "B2"])
        #expect(try LogReader(path: path).header.generation == 1)
        try reopened.close()
    }

    @Test("compaction keeps the store's permission bits, owner and group")
    func compactionKeepsOwnership() throws {
        let container = try ModelContainer(path: path, model: TestModels.school)
        try insertCourse("A1", into: container)
        #expect(chmod(path, 0o640) == 0)
        let owner: uid_t = getuid() == 0 ? 2345 : getuid()
        #expect(chown(path, owner, getgid()) == 0)
        try container.compact()
        try container.close()
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o640)
        #expect(info.st_uid == owner)
    }

    @Test("a new store is readable and writable by its owner only")
    func newStoreIsPrivate() throws {
        let container = try ModelContainer(path: path, model: TestModels.school)
        try container.close()
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o600)
    }
}

/// Every way to open a store refuses a path that is not a regular file, naming it (issue 9, item 11).
///
/// The FIFO's write end is held open here during each open, so that a regression cannot hang the test run (it
/// would fail with another error instead); LogFormat's and egctl's tests check the open without any writer.
@Suite("Store path that is not a regular file")
struct StorePathKindTests {
    enum Opener: String, CaseIterable, CustomTestStringConvertible {
        case readWriteWithModel, readWriteRecordedModel, view, viewLatest
        var testDescription: String { rawValue }

        func open(_ path: String) throws {
            switch self {
            case .readWriteWithModel: _ = try ModelContainer(path: path, model: TestModels.school)
            case .readWriteRecordedModel: _ = try ModelContainer(path: path)
            case .view: _ = try ModelContainer.view(path: path, asOfTransaction: 1)
            case .viewLatest: _ = try ModelContainer.view(path: path)
            }
        }
    }

    let directory = TemporaryDirectory()

    @Test("a FIFO, a directory and /dev/null are refused with the kind of file", arguments: Opener.allCases)
    func refused(opener: Opener) throws {
        let fifo = directory.file("fifo.eglog")
        #expect(mkfifo(fifo, 0o600) == 0)
        let writeEnd = open(fifo, O_RDWR | O_NONBLOCK)
        defer { close(writeEnd) }
        let folder = directory.file("folder.eglog")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        for (path, word) in [(fifo, "FIFO"), (folder, "directory"), ("/dev/null", "character device")] {
            let error = #expect(throws: EventGraphError.self) { try opener.open(path) }
            #expect(error?.message.contains(path) == true, "\(String(describing: error))")
            #expect(error?.message.contains("is a \(word)") == true, "\(String(describing: error))")
        }
    }
}

/// After a failed write the store can be closed and reopened in the same process, even while contexts and
/// objects of the old container are alive (issue 9, item 14).
@Suite("Reopening after a failed write")
struct ReopenAfterFailureTests {
    @Test(
        "close releases the store after a failed save; a new container opens it",
        arguments: [FaultInjector.Operation.write, .sync])
    func reopenAfterFailedSave(operation: FaultInjector.Operation) throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        var configuration = ModelContainer.Configuration(durability: .full)
        configuration.faultInjector = faults
        let container = try ModelContainer(
            path: directory.file(), model: TestModels.school, configuration: configuration)
        let context = container.newBackgroundContext()
        let kept = Course()
        context.insert(kept)
        kept.code = "KEPT"
        try context.save()

        faults.arm(operation, fault: .fail(errno: ENOSPC))
        let lost = Course()
        context.insert(lost)
        lost.code = "LOST"
        #expect(throws: EventGraphError.self) { try context.save() }
        #expect(throws: EventGraphError.self) { try container.close() }

        // The old container, its context and its objects are still alive here.
        let reopened = try ModelContainer(path: directory.file(), model: TestModels.school)
        let codes = Set(try reopened.newBackgroundContext().fetch(FetchDescriptor<Course>()).map(\.code))
        #expect(codes == ["KEPT"])
        let again = reopened.newBackgroundContext()
        let next = Course()
        again.insert(next)
        next.code = "NEXT"
        try again.save()
        try reopened.close()
        #expect(kept.code == "KEPT")
        withExtendedLifetime((container, context, lost)) {}
    }
}
