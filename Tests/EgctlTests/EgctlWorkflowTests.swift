import EventGraph
import EventGraphExamples
import Foundation
import Testing

@Suite("egctl demo → inspect → replay → compact → verify")
struct EgctlWorkflowTests {
    @Test("the state digest survives compaction and equals an --until replay of the last transaction")
    func fullWorkflow() throws {
        let scratch = Scratch()
        let store = scratch.file("blog.eglog")
        let demo = try Egctl.run("demo", store, "--posts", "600", "--seed", "3")
        #expect(demo.stdout.contains("in "))
        #expect(demo.status == 0, "\(demo.stderr)")

        let inspect = try Egctl.run("inspect", store, "--json").json()
        let counts = try #require(inspect["objectsByEntity"] as? [String: Int])
        #expect(counts["Post"]! > 500)
        #expect(counts["Author"]! > 0 && counts["Tag"]! == 8 && counts["Category"]! == 4)
        #expect(inspect["sealed"] as? Bool == true)
        let lastTransaction = try #require(inspect["lastTransactionID"] as? Int)
        #expect(lastTransaction > 10, "the demo writes many saves")

        let before = try Egctl.run("replay", store, "--summary", "--json").json()
        let digest = try #require(before["stateDigest"] as? String)
        #expect(digest.count == 32)

        let until = try Egctl.run("replay", store, "--until", "\(lastTransaction)", "--summary", "--json").json()
        #expect(until["stateDigest"] as? String == digest)
        let earlier = try Egctl.run("replay", store, "--until", "2", "--summary", "--json").json()
        #expect(earlier["stateDigest"] as? String != digest)
        #expect(earlier["lastTransactionID"] as? Int == 2)

        let compact = try Egctl.run("compact", store, "--json")
        #expect(compact.status == 0, "\(compact.stderr)")
        let compacted = try compact.json()
        #expect(compacted["stateDigest"] as? String == digest)
        #expect((compacted["newByteCount"] as! Int) < (compacted["oldByteCount"] as! Int))

        let after = try Egctl.run("replay", store, "--summary", "--json").json()
        #expect(after["stateDigest"] as? String == digest)

        let verify = try Egctl.run("verify", store, "--json")
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        #expect(try verify.json()["intact"] as? Bool == true)

        // Transactions compacted into the checkpoint can no longer be replayed to.
        let gone = try Egctl.run("replay", store, "--until", "2", "--summary")
        #expect(gone.status != 0)
        #expect(gone.stderr.contains("checkpoint"))
    }

    @Test("changesets, dump with --where, history and the model diagram")
    func readingCommands() throws {
        let scratch = Scratch()
        let store = scratch.file("blog.eglog")
        try Egctl.run("demo", store, "--posts", "200")

        let lines = try Egctl.run("replay", store, "--changesets", "--json").stdout.split(separator: "\n")
        #expect(lines.count > 3)
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["transaction"] is Int)
            #expect(object["operations"] is [Any])
        }
        let text = try Egctl.run("replay", store, "--changesets", "--from", "2", "--until", "2")
        #expect(text.stdout.hasPrefix("transaction 2"))
        #expect(text.stdout.contains("insert eventgraph://"))

        let dump = try Egctl.run(
            "dump", store, "--entity", "Post", "--where", "identity <= 5 and identity > 2", "--format", "json")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [[String: Any]])
        #expect(Set(rows.compactMap { $0["identity"] as? Int }).isSubset(of: [3, 4, 5]))
        #expect(rows.allSatisfy { ($0["authoredBy"] as? String)?.hasPrefix("eventgraph://") == true })
        let csv = try Egctl.run("dump", store, "--entity", "Tag", "--format", "csv")
        #expect(csv.stdout.split(separator: "\n").count == 9)  // header + 8 tags
        #expect(csv.stdout.hasPrefix("uri,entity,name,posts"))

        let uri = try #require(rows.first?["uri"] as? String)
        let history = try Egctl.run("history", store, uri, "--json").json()
        let entries = try #require(history["history"] as? [[String: Any]])
        #expect(entries.first?["transaction"] as? Int != nil)

        let dot = try Egctl.run("inspect", store, "--dot")
        #expect(dot.stdout.hasPrefix("digraph"))
        #expect(dot.stdout.contains("\"Author\" -> \"Post\"") || dot.stdout.contains("\"Post\" -> \"Author\""))
        #expect(dot.stdout.contains("normalnormal"))  // to-many edges have a double arrow head
    }

    @Test("a store written by EventGraph's object layer has the digest its container reports")
    func digestAgreesWithTheObjectLayer() throws {
        let scratch = Scratch()
        let store = scratch.file("library.eglog")
        let containerDigest: String
        do {
            let container = try BlogLibrary.open(path: store)
            let context = container.newBackgroundContext(name: "import")
            for identity in 1...30 {
                try BlogLibrary.post(
                    with: PostRecord(
                        identity: Int64(identity), title: "Post \(identity)",
                        author: AuthorRecord(identity: Int64(identity % 4), name: "Author \(identity % 4)"),
                        tags: ["swift", "tag\(identity % 3)"], categories: ["news"]),
                    in: context)
                if identity % 7 == 0 { try context.save() }
            }
            try context.save()
            containerDigest = try container.stateDigest().description
            try container.close()
        }
        let replay = try Egctl.run("replay", store, "--summary", "--json")
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(try replay.json()["stateDigest"] as? String == containerDigest)
        let verify = try Egctl.run("verify", store)
        #expect(verify.status == 0, "\(verify.stdout)")
    }
}
