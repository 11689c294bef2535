import EventGraph
import Foundation
import Workload

// Issue 12's two measurements, EventGraph against itself: the same work with its objects in two stores (one save
// across the stores, atomic) and in one store. Reported as notes under the table, with the ratio and its goal.

/// A reader in the default store; its loans are in the "Library" store.
final class CrossReader: ManagedObject {
    @Attribute var name: String = ""
    @Relationship(inverse: "reader") var loans: Set<CrossLoan>
}

final class CrossLoan: ManagedObject {
    @Attribute var title: String = ""
    @Relationship var reader: CrossReader?
}

/// The same entities for the store that holds both.
final class SoloReader: ManagedObject {
    @Attribute var name: String = ""
    @Relationship(inverse: "reader") var loans: Set<SoloLoan>
}

final class SoloLoan: ManagedObject {
    @Attribute var title: String = ""
    @Relationship var reader: SoloReader?
}

extension Comparison {
    static let crossModel = try! ObjectModel(
        name: "CrossStores", version: "1", types: [CrossReader.self, CrossLoan.self],
        configurations: ["Library": [CrossLoan.self]])
    static let soloModel = try! ObjectModel(name: "OneStore", version: "1", types: [SoloReader.self, SoloLoan.self])

    /// A new container: the two-store one when `acrossStores`, else one store.
    func crossStoreContainer(acrossStores: Bool, label: String) throws -> ModelContainer {
        let path = freshPath(EventGraphEngine.self, label)
        guard acrossStores else { return try ModelContainer(path: path, model: Self.soloModel) }
        return try ModelContainer(
            model: Self.crossModel,
            stores: [StoreDescription(path: path), StoreDescription(path: path + "-library", configuration: "Library")])
    }

    func crossStoreScenarios() throws {
        let saves = sizes.singleSaves
        log("cross-store-save: \(saves) durable saves of a reader and a loan related, two stores vs one")
        let save = try alternateStores("cross-store-save") { acrossStores in
            let container = try crossStoreContainer(acrossStores: acrossStores, label: "cross-save")
            defer { try? container.close() }
            let seconds = try measureSeconds {
                for index in 0..<saves {
                    let context = container.newBackgroundContext()
                    if acrossStores {
                        let reader = CrossReader()
                        context.insert(reader)
                        reader.name = "reader \(index)"
                        let loan = CrossLoan()
                        context.insert(loan)
                        loan.title = "loan \(index)"
                        loan.reader = reader
                    } else {
                        let reader = SoloReader()
                        context.insert(reader)
                        reader.name = "reader \(index)"
                        let loan = SoloLoan()
                        context.insert(loan)
                        loan.title = "loan \(index)"
                        loan.reader = reader
                    }
                    try context.save()
                }
            }
            return Double(saves) / seconds
        }
        notes.append(
            "cross-store save (durable, a reader and its loan in two stores vs one store): "
                + "\(format(save.two)) vs \(format(save.one)) saves/s, ratio \(String(format: "%.2f", save.two / save.one)) "
                + "(goal ≥ 0.5)")

        let readers = 100
        let loansPerReader = max(10, sizes.posts / 100)
        let passes = 5
        log("cross-store-fetch: \(readers) readers × \(loansPerReader) loans through the to-many, \(passes) passes")
        let fetch = try alternateStores("cross-store-fetch") { acrossStores in
            let container = try crossStoreContainer(acrossStores: acrossStores, label: "cross-fetch")
            defer { try? container.close() }
            try fillReaders(container, acrossStores: acrossStores, readers: readers, loansPerReader: loansPerReader)
            var checksum = 0
            let seconds = try measureSeconds {
                for _ in 0..<passes {
                    let context = container.newBackgroundContext()
                    if acrossStores {
                        for reader in try context.fetch(FetchDescriptor<CrossReader>()) {
                            for loan in reader.loans { checksum &+= loan.title.utf8.count }
                        }
                    } else {
                        for reader in try context.fetch(FetchDescriptor<SoloReader>()) {
                            for loan in reader.loans { checksum &+= loan.title.utf8.count }
                        }
                    }
                }
            }
            precondition(checksum > 0, "every pass reads the loans' titles")
            return Double(readers * loansPerReader * passes) / seconds
        }
        notes.append(
            "cross-store fetch (every reader's loans through a to-many, loans in another store vs the same store): "
                + "\(format(fetch.two)) vs \(format(fetch.one)) loans/s, ratio "
                + "\(String(format: "%.2f", fetch.two / fetch.one)) (goal ≥ 0.8)")
    }

    /// Runs `measure` `sizes.runs` times for two stores and one, alternating which goes first; the medians.
    private func alternateStores(_ label: String, _ measure: (Bool) throws -> Double) throws -> (
        two: Double, one: Double
    ) {
        var samples: [[Double]] = [[], []]
        for run in 0..<sizes.runs {
            for acrossStores in run % 2 == 0 ? [true, false] : [false, true] {
                let value = try measure(acrossStores)
                samples[acrossStores ? 0 : 1].append(value)
                log("  \(label) \(acrossStores ? "two stores" : "one store") run \(run + 1): \(format(value))")
            }
        }
        return (median(samples[0]), median(samples[1]))
    }

    /// Setup (not measured): `readers` readers, each with `loansPerReader` loans, in one save.
    private func fillReaders(_ container: ModelContainer, acrossStores: Bool, readers: Int, loansPerReader: Int) throws
    {
        let context = container.newBackgroundContext()
        for index in 0..<readers {
            if acrossStores {
                let reader = CrossReader()
                context.insert(reader)
                reader.name = "reader \(index)"
                for number in 0..<loansPerReader {
                    let loan = CrossLoan()
                    context.insert(loan)
                    loan.title = "loan \(index)-\(number)"
                    loan.reader = reader
                }
            } else {
                let reader = SoloReader()
                context.insert(reader)
                reader.name = "reader \(index)"
                for number in 0..<loansPerReader {
                    let loan = SoloLoan()
                    context.insert(loan)
                    loan.title = "loan \(index)-\(number)"
                    loan.reader = reader
                }
            }
        }
        try context.save()
    }
}
