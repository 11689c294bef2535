import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// The container's transaction notifications and change feed with several stores: they followed the first store
/// only. Every store's transactions are published now, each with its store; a save across stores is one
/// transaction per store, tied by `crossStoreParts`; and a save reports each store's transaction, not the latest ID
/// of any store.
@Suite("Transaction notifications and the change feed over several stores")
struct SeveralStoresTransactionFeedTests {
    let defaultName = ObjectModel.defaultConfigurationName

    /// What an observation received.
    final class Received: Sendable {
        let transactions = LockedValue<[CommittedTransaction]>([])
    }

    /// Saves a pupil (default store), then a tutor (Staff), then a pupil and a lecture in one save (default and
    /// Public). Returns the reports of the last save.
    private func saveThree(_ container: ModelContainer) throws -> [ContextChanges] {
        let context = container.newBackgroundContext(name: "writer")
        let pupil = Pupil()
        context.insert(pupil)
        pupil.name = "Ada"
        try context.save()
        let tutor = Tutor()
        context.insert(tutor)
        tutor.name = "Ben"
        try context.save()
        var reports: [ContextChanges] = []
        let observation = context.observeChanges { reports.append($0) }
        let second = Pupil()
        context.insert(second)
        second.name = "Cy"
        let lecture = Lecture()
        context.insert(lecture)
        lecture.code = "SE1"
        try context.save()
        observation.cancel()
        return reports
    }

    /// A transaction's store, by configuration name.
    private func configuration(of transaction: CommittedTransaction, in container: ModelContainer) -> String? {
        [ObjectModel.defaultConfigurationName, "Staff", "Public"].first {
            container.storeUUID(ofConfiguration: $0) == transaction.storeUUID
        }
    }

    /// The stores of some transactions, by configuration name, and their IDs; the two parts of the save across
    /// stores are delivered in the order of their store UUIDs (random), so they are sorted here.
    /// Transaction IDs are counted from `base`, each store's last transaction before the test's saves.
    private func described(
        _ transactions: [CommittedTransaction], in container: ModelContainer, after base: [UUID: UInt64]
    ) -> [String] {
        var names = transactions.map {
            "\(configuration(of: $0, in: container) ?? "?") \($0.transactionID - (base[$0.storeUUID] ?? 0))"
        }
        if names.count == 4 { names[2...].sort() }
        return names
    }

    @Test func everyStoresTransactionsAreDeliveredWithTheirStore() throws {
        let directory = TemporaryDirectory()
        let container = try SeveralStoresModels.container(in: directory)
        let received = Received()
        let observation = container.observeTransactions { transaction in
            received.transactions.withLock { $0.append(transaction) }
        }
        #expect(observation.registeredAfterTransactions.count == 3)
        let base = observation.registeredAfterTransactions
        let reports = try saveThree(container)
        let seen = received.transactions.withLock { $0 }

        #expect(
            described(seen, in: container, after: base) == [
                "\(defaultName) 1", "Staff 1", "\(defaultName) 2", "Public 1",
            ])
        for transaction in seen {
            #expect(transaction.changes.allSatisfy { $0.objectID.storeUUID == transaction.storeUUID })
        }
        #expect(seen[0].crossStoreParts.isEmpty && seen[1].crossStoreParts.isEmpty)
        // The save across two stores: one transaction per store, each naming both parts.
        let parts = Set(seen[2...].map { StoreTransaction(storeUUID: $0.storeUUID, transactionID: $0.transactionID) })
        #expect(Set(seen[2].crossStoreParts) == parts)
        #expect(seen[2].crossStoreParts == seen[3].crossStoreParts)

        // The save's report names each store's transaction; its transaction ID is the first store's.
        let saved = try #require(reports.first { if case .saved = $0.reason { true } else { false } })
        #expect(Set(saved.transactions) == parts)
        let defaultStore = try #require(container.storeUUID(ofConfiguration: "Default"))
        let second = base[defaultStore]! + 2
        #expect(saved.transactions.first == StoreTransaction(storeUUID: defaultStore, transactionID: second))
        #expect(saved.reason == .saved(transactionID: second))
        observation.cancel()
        try container.close()
    }

    @Test func theAsyncSequenceHasEveryStoresTransactions() async throws {
        let directory = TemporaryDirectory()
        let container = try SeveralStoresModels.container(in: directory)
        let base = Dictionary(uniqueKeysWithValues: container.stores.map { ($0.storeUUID, $0.lastTransactionID) })
        let stream = container.transactions
        _ = try saveThree(container)
        var seen: [CommittedTransaction] = []
        for await transaction in stream {
            seen.append(transaction)
            if seen.count == 4 { break }
        }
        #expect(
            described(seen, in: container, after: base) == [
                "\(defaultName) 1", "Staff 1", "\(defaultName) 2", "Public 1",
            ])
        try container.close()
    }

    @Test func theChangeFeedReadsEveryStoreAndResumesPerStore() throws {
        let directory = TemporaryDirectory()
        var container = try SeveralStoresModels.container(in: directory)
        let received = Received()
        let observation = container.observeTransactions { transaction in
            received.transactions.withLock { $0.append(transaction) }
        }
        let base = observation.registeredAfterTransactions
        _ = try saveThree(container)
        let all = try container.changes(afterEach: base)
        #expect(
            described(all, in: container, after: base) == [
                "\(defaultName) 1", "Staff 1", "\(defaultName) 2", "Public 1",
            ])
        // From each store's start: what the stores committed when they were created, then the same.
        #expect(try Array(container.changes(afterEach: [:]).suffix(4)).map(\.transactionID) == all.map(\.transactionID))
        // The feed and the notifications describe the same transactions (the feed adds old values).
        let notified = received.transactions.withLock { $0 }
        func summary(_ transaction: CommittedTransaction) -> String {
            "\(transaction.storeUUID) \(transaction.transactionID) \(transaction.crossStoreParts) "
                + "\(transaction.changes.map(\.objectID))"
        }
        #expect(all.map(summary).sorted() == notified.map(summary).sorted())
        observation.cancel()

        // A transaction ID alone is ambiguous with several stores.
        #expect(throws: EventGraphError.self) { try container.changes(after: 0) }

        // Resumed after a reopen from the first two transactions: only the save across stores is left.
        let staff = try #require(container.storeUUID(ofConfiguration: "Staff"))
        let defaultStore = try #require(container.storeUUID(ofConfiguration: "Default"))
        try container.close()
        container = try SeveralStoresModels.container(in: directory)
        let publicStore = try #require(container.storeUUID(ofConfiguration: "Public"))
        let rest = try container.changes(afterEach: [
            defaultStore: base[defaultStore]! + 1, staff: base[staff]! + 1, publicStore: base[publicStore]!,
        ])
        #expect(rest.map { configuration(of: $0, in: container) ?? "?" }.sorted() == [defaultName, "Public"].sorted())
        #expect(rest.allSatisfy { $0.crossStoreParts.count == 2 })
        #expect(throws: EventGraphError.self) { try container.changes(afterEach: [UUID(): 0]) }
        try container.close()
    }

    /// Two threads save into two stores at once: the handler is still called one transaction at a time, each
    /// store's in order, every transaction once.
    @Test func concurrentSavesInTwoStoresReachTheHandlerOneAtATime() throws {
        let directory = TemporaryDirectory()
        let container = try SeveralStoresModels.container(in: directory)
        let received = Received()
        let inside = LockedValue(0)
        let overlaps = LockedValue(0)
        let observation = container.observeTransactions { transaction in
            if inside.withLock({ count in
                count += 1
                return count
            }) > 1 {
                overlaps.withLock { $0 += 1 }
            }
            received.transactions.withLock { $0.append(transaction) }
            inside.withLock { $0 -= 1 }
        }
        let base = observation.registeredAfterTransactions
        let saves = 20
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            let context = container.newBackgroundContext(name: "writer \(thread)")
            for number in 0..<saves {
                if thread == 0 {
                    let pupil = Pupil()
                    context.insert(pupil)
                    pupil.name = "P\(number)"
                } else {
                    let tutor = Tutor()
                    context.insert(tutor)
                    tutor.name = "T\(number)"
                }
                try! context.save()
            }
        }
        let seen = received.transactions.withLock { $0 }
        #expect(overlaps.withLock { $0 } == 0)
        #expect(seen.count == 2 * saves)
        for store in [ObjectModel.defaultConfigurationName, "Staff"] {
            let uuid = try #require(container.storeUUID(ofConfiguration: store))
            let ids = seen.filter { $0.storeUUID == uuid }.map(\.transactionID)
            #expect(ids == Array((base[uuid]! + 1)...(base[uuid]! + UInt64(saves))), "\(store)")
        }
        observation.cancel()
        try container.close()
    }
}
