import EventGraph
import Foundation
import LogFormat
import Testing

/// A memo: one attribute, so a lost transaction takes nothing later ones depend on.
final class Memo: ManagedObject {
    @Attribute var text: String = ""
}

@Suite("A salvaged store opens in the library read-write, saves, and verifies")
struct EgctlSalvagedStoreTests {
    static let model = try! ObjectModel(name: "Memos", version: "1", types: [Memo.self])

    /// A store of five saves whose third transaction has a flipped bit in synced data.
    func damagedStore(_ scratch: Scratch) throws -> String {
        let store = scratch.file("memos.eglog")
        let container = try ModelContainer(path: store, model: Self.model)
        let context = container.newBackgroundContext()
        for number in 1...5 {
            let memo = Memo()
            context.insert(memo)
            memo.text = "memo \(number) with a few words, so the body is long enough to damage"
            try context.save()
        }
        try container.close()
        var offsets: [UInt64] = []
        try LogReader(path: store).scan { record in
            if case .transaction(let transaction) = record { offsets.append(transaction.byteOffset) }
        }
        try #require(offsets.count == 5)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: store))
        bytes[Int(offsets[2]) + 60] ^= 0x10
        try bytes.write(to: URL(fileURLWithPath: store))
        return store
    }

    @Test("salvage → open read-write (gap reported) → save → egctl verify intact, digests agree")
    func salvageOpenSaveVerify() throws {
        let scratch = Scratch()
        let store = try damagedStore(scratch)
        let salvaged = scratch.file("salvaged.eglog")
        let salvage = try Egctl.run("salvage", store, "--output", salvaged)
        #expect(salvage.status == 0, "\(salvage.stdout)\(salvage.stderr)")

        let container = try ModelContainer(
            path: salvaged, model: Self.model, configuration: .init(recoveryHandler: nil))
        #expect(!container.isReadOnly)
        #expect(
            container.recoveryReport?.missingTransactionIDs == [3...3],
            "\(String(describing: container.recoveryReport))")
        let context = container.newBackgroundContext()
        let memo = Memo()
        context.insert(memo)
        memo.text = "written after the salvage"
        try context.save()
        #expect(container.lastTransactionID == 6, "saves continue after the last ID")
        let digest = try container.stateDigest().description
        try container.close()

        let verify = try Egctl.run("verify", salvaged, "--json")
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        let json = try verify.json()
        #expect(json["intact"] as? Bool == true)
        #expect(json["missingTransactionIDs"] as? [String] == ["3"], "the gap is reported, not called damage")
        #expect(json["stateDigest"] as? String == digest, "egctl's digest is the library's")
        let text = try Egctl.run("verify", salvaged)
        #expect(text.stdout.contains("transaction IDs missing: 3"), "\(text.stdout)")

        let replay = try Egctl.run("replay", salvaged, "--summary", "--json")
        #expect(try replay.json()["stateDigest"] as? String == digest)
        #expect(try replay.json()["objectCount"] as? Int == 5)
    }
}
