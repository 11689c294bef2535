import EventGraph
import Foundation
import Testing

/// Opening several stores refuses what cannot be one container, with a sentence naming the stores involved.
@Suite("Opening several stores: bad input")
struct SeveralStoresOpenErrorTests {
    private let model = SeveralStoresModels.campus

    /// Opens `stores` and returns the error's code and message (fails when the open succeeds).
    private func openingError(_ stores: [StoreDescription]) throws -> EventGraphError {
        do {
            let container = try ModelContainer(model: model, stores: stores)
            try container.close()
        } catch {
            return error
        }
        Issue.record("opening \(stores) succeeded")
        return EventGraphError(.invalidArgument, "")
    }

    @Test func aConfigurationWithNoStoreIsRefused() throws {
        let directory = TemporaryDirectory()
        let error = try openingError(Array(SeveralStoresModels.stores(in: directory).prefix(2)))
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("the configuration 'Public' (Lecture, Session) has no store"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("private.eglog")), "nothing was created")
    }

    @Test func aConfigurationTheModelLacksIsRefused() throws {
        let directory = TemporaryDirectory()
        let stores =
            SeveralStoresModels.stores(in: directory) + [
                StoreDescription(path: directory.file("x"), configuration: "Archive")
            ]
        let error = try openingError(stores)
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("names the configuration 'Archive', which the model 'Campus' lacks"), "\(error)")
    }

    @Test func twoStoresForOneConfigurationAreRefused() throws {
        let directory = TemporaryDirectory()
        var stores = SeveralStoresModels.stores(in: directory)
        stores[1].configuration = "Public"
        let error = try openingError(stores)
        #expect(error.message.contains("both hold the configuration 'Public'"), "\(error)")
    }

    /// The ways to name the private store's file a second time.
    enum SecondName: String, CaseIterable {
        case samePath, dotSegments, symbolicLink, hardLink
    }

    @Test(arguments: SecondName.allCases)
    func oneFileGivenTwiceIsRefused(secondName: SecondName) throws {
        let directory = TemporaryDirectory()
        var stores = SeveralStoresModels.stores(in: directory)
        try ModelContainer(model: model, stores: stores).close()
        let original = stores[0].path
        switch secondName {
        case .samePath:
            stores[2].path = original
        case .dotSegments:
            stores[2].path = directory.path + "/./sub/../private.eglog"
            try FileManager.default.createDirectory(atPath: directory.file("sub"), withIntermediateDirectories: true)
        case .symbolicLink:
            stores[2].path = directory.file("link.eglog")
            try FileManager.default.createSymbolicLink(atPath: stores[2].path, withDestinationPath: original)
        case .hardLink:
            stores[2].path = directory.file("second-name.eglog")
            try FileManager.default.linkItem(atPath: original, toPath: stores[2].path)
        }
        let error = try openingError(stores)
        #expect(error.code == .storeMismatch, "\(error)")
        #expect(error.message.contains("are one file"), "\(error)")
    }

    @Test func aMissingFileGivenTwiceIsRefusedBeforeAnythingIsCreated() throws {
        let directory = TemporaryDirectory()
        var stores = SeveralStoresModels.stores(in: directory)
        stores[2].path = stores[0].path
        let error = try openingError(stores)
        #expect(error.code == .storeMismatch && error.message.contains("are one file"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: stores[0].path))
    }

    @Test func aCopyOfOneStoreGivenAsAnotherIsRefused() throws {
        let directory = TemporaryDirectory()
        let stores = SeveralStoresModels.stores(in: directory)
        try ModelContainer(model: model, stores: stores).close()
        try FileManager.default.removeItem(atPath: stores[2].path)
        try FileManager.default.copyItem(atPath: stores[0].path, toPath: stores[2].path)
        let error = try openingError(stores)
        #expect(error.code == .storeMismatch, "\(error)")
        #expect(error.message.contains("are the same store"), "\(error)")
    }

    @Test func aStoreFileReplacedByAnotherStoresFileIsRefused() throws {
        let directory = TemporaryDirectory()
        let stores = SeveralStoresModels.stores(in: directory)
        try ModelContainer(model: model, stores: stores).close()
        // Another campus's public store, put in place of this one's.
        let elsewhere = TemporaryDirectory()
        try ModelContainer(model: model, stores: SeveralStoresModels.stores(in: elsewhere)).close()
        try FileManager.default.moveItem(atPath: stores[2].path, toPath: directory.file("original-public.eglog"))
        try FileManager.default.copyItem(atPath: elsewhere.file("public.eglog"), toPath: stores[2].path)

        let error = try openingError(stores)
        #expect(error.code == .storeMismatch, "\(error)")
        #expect(error.message.contains("was that file replaced by another store's file?"), "\(error)")
        #expect(error.message.contains(stores[2].path), "\(error)")
        // Nothing was recorded by the refused open: with the original file back, the stores open together.
        try FileManager.default.removeItem(atPath: stores[2].path)
        try FileManager.default.moveItem(atPath: directory.file("original-public.eglog"), toPath: stores[2].path)
        try ModelContainer(model: model, stores: stores).close()
    }
}
