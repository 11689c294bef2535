import EventGraph
import Foundation
import Testing

// Members in the private store belong to a club in the public store: relating a new member to the club writes both
// stores in one save across stores (`Docs/FileFormat.md` §3.6).

private final class Member: ManagedObject {
    @Attribute var name: String = ""
    @Relationship(inverse: "members") var club: Club?
}

private final class Club: ManagedObject {
    @Attribute var city: String = ""
    @Relationship(inverse: "club") var members: Set<Member>
}

/// Two stores' files, copied at chosen moments while a container has them open (a copy has no seal: as after a
/// crash at that moment).
private struct Clubs {
    static let model = try! ObjectModel(
        name: "Clubs", types: [Member.self, Club.self], configurations: ["Public": [Club.self]])

    let scratch = Scratch()
    var privatePath: String { scratch.file("private.eglog") }
    var publicPath: String { scratch.file("public.eglog") }
    /// The private store ending with its part of the save that added Ben, undecided (no seal after it).
    var privateEndingWithBen: String { scratch.file("private-crashed.eglog") }
    /// The public store from before that save: it lacks its part.
    var publicBeforeBen: String { scratch.file("public-before.eglog") }
    let publicUUID: UUID
    let benURI: String

    /// Ada joins a club (a save across stores), the club moves (public store only), then Ben joins it (a second
    /// save across stores); the files are copied before and after Ben's save.
    init() throws {
        let scratch = self.scratch
        let container = try ModelContainer(
            model: Self.model,
            stores: [
                StoreDescription(path: scratch.file("private.eglog")),
                StoreDescription(path: scratch.file("public.eglog"), configuration: "Public"),
            ])
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let club = Club()
        context.insert(club)
        club.city = "Oslo"
        let ada = Member()
        context.insert(ada)
        ada.name = "Ada"
        ada.club = club
        try context.save()
        club.city = "Bergen"
        try context.save()
        try FileManager.default.copyItem(
            atPath: scratch.file("public.eglog"), toPath: scratch.file("public-before.eglog"))
        let ben = Member()
        context.insert(ben)
        ben.name = "Ben"
        ben.club = club
        try context.save()
        try FileManager.default.copyItem(
            atPath: scratch.file("private.eglog"), toPath: scratch.file("private-crashed.eglog"))
        publicUUID = try #require(container.storeUUID(ofConfiguration: "Public"))
        benURI = ben.objectID.uriString
    }
}

/// egctl shows a part of a save across stores as the store does: only once the stores given decide that it
/// committed, with the library's own rule (``CrossStoreDecision``); a store alone says the part is undecided and
/// which stores decide it.
@Suite("egctl decides saves across stores as the store does")
struct EgctlCrossStoreDecisionTests {
    @Test func aStoreAloneLeavesAnUndecidedPartOutAndNamesTheStoresThatDecideIt() throws {
        let clubs = try Clubs()
        let path = clubs.privateEndingWithBen
        let replay = try Egctl.run("replay", path, "--summary", "--json")
        #expect(replay.status == 0, "\(replay.stderr)")
        let json = try replay.json()
        #expect(json["objectCount"] as? Int == 1, "Ben's part is undecided: left out")
        let part = try #require(json["undecidedSaveAcrossStores"] as? [String: Any])
        #expect(part["decision"] as? String == "undecided")
        #expect(part["shown"] as? Bool == false)
        #expect(part["decidedBy"] as? [String] == [clubs.publicUUID.uuidString])
        // The library's read-only view of the store alone shows the same state.
        let view = try ModelContainer.view(path: path, model: Clubs.model, recoveryHandler: nil)
        #expect(json["stateDigest"] as? String == (try view.stateDigest()).description)
        try view.close()

        let text = try Egctl.run("replay", path)
        #expect(text.stdout.contains("undecided    transaction "), "\(text.stdout)")
        #expect(text.stdout.contains(clubs.publicUUID.uuidString), "\(text.stdout)")

        let dump = try Egctl.run("dump", path, "--entity", "Member", "--format", "json")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["name"] as? String } == ["Ada"])
        #expect(dump.stderr.contains("undecided"), "\(dump.stderr)")

        let history = try Egctl.run("history", path, clubs.benURI, "--json")
        #expect(history.status == 0, "\(history.stderr)")
        #expect((try history.json()["history"] as? [Any])?.isEmpty == true, "Ben's insert is not shown as committed")

        let inspect = try Egctl.run("inspect", path, "--json").json()
        #expect(inspect["objectCount"] as? Int == 1)
        #expect((inspect["undecidedSaveAcrossStores"] as? [String: Any])?["decision"] as? String == "undecided")

        let verify = try Egctl.run("verify", path, "--json")
        #expect(verify.status == 0, "an undecided part is not damage")
        let verified = try #require((try verify.json()["undecidedSaveAcrossStores"]) as? [String: Any])
        #expect(verified["decision"] as? String == "undecided")
    }

    @Test func verifyWithAStoreThatLacksItsPartLeavesThePartOutAsNotCommitted() throws {
        let clubs = try Clubs()
        let result = try Egctl.run("verify", clubs.privateEndingWithBen, clubs.publicBeforeBen, "--json")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let json = try result.json()
        let stores = try #require(json["stores"] as? [[String: Any]])
        #expect(stores.first?["objectCount"] as? Int == 1)
        let part = try #require(stores.first?["undecidedSaveAcrossStores"] as? [String: Any])
        #expect(part["decision"] as? String == "notCommitted")
        #expect(part["lackingStore"] as? String == clubs.publicUUID.uuidString)
        let references = try #require(json["foreignReferences"] as? [String: Any])
        #expect((references["dangling"] as? [Any])?.isEmpty == true, "Ben's reference is not checked: left out")
    }

    @Test func verifyWithEveryParticipantDecidesThePartCommittedAndShowsIt() throws {
        let clubs = try Clubs()
        let result = try Egctl.run("verify", clubs.privateEndingWithBen, clubs.publicPath, "--json")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let json = try result.json()
        let stores = try #require(json["stores"] as? [[String: Any]])
        #expect(stores.first?["objectCount"] as? Int == 2)
        let part = try #require(stores.first?["undecidedSaveAcrossStores"] as? [String: Any])
        #expect(part["decision"] as? String == "committed")
        #expect(part["shown"] as? Bool == true)
        let references = try #require(json["foreignReferences"] as? [String: Any])
        #expect(references["checked"] as? Int == 4, "Ada and Ben → club, the club → Ada and Ben")
        #expect((references["inverseMismatches"] as? [Any])?.isEmpty == true)
    }
}
