import EventGraph
import Foundation
import Testing

// Patients in the private store attend a clinic in the public store: each patient's `clinic` is a reference into the
// public store, and the clinic's `patients` are references into the private one.

private final class Patient: ManagedObject {
    @Attribute var name: String = ""
    @Relationship(inverse: "patients") var clinic: Clinic?
}

private final class Clinic: ManagedObject {
    @Attribute var city: String = ""
    @Relationship(inverse: "clinic") var patients: Set<Patient>
}

/// Two stores of one container, as files, with their UUIDs.
private struct Hospital {
    static let model = try! ObjectModel(
        name: "Hospital", types: [Patient.self, Clinic.self], configurations: ["Public": [Clinic.self]])

    let scratch = Scratch()
    var privatePath: String { scratch.file("private.eglog") }
    var publicPath: String { scratch.file("public.eglog") }
    let privateUUID: UUID
    let publicUUID: UUID

    /// One clinic and three patients of it.
    init() throws {
        let scratch = self.scratch
        let container = try Self.open(scratch)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let clinic = Clinic()
        context.insert(clinic)
        clinic.city = "Oslo"
        for name in ["Ada", "Ben", "Cy"] {
            let patient = Patient()
            context.insert(patient)
            patient.name = name
            patient.clinic = clinic
        }
        try context.save()
        privateUUID = try #require(container.storeUUID(ofConfiguration: ObjectModel.defaultConfigurationName))
        publicUUID = try #require(container.storeUUID(ofConfiguration: "Public"))
    }

    private static func open(_ scratch: Scratch) throws -> ModelContainer {
        try ModelContainer(
            model: model,
            stores: [
                StoreDescription(path: scratch.file("private.eglog")),
                StoreDescription(path: scratch.file("public.eglog"), configuration: "Public"),
            ])
    }

    /// Keeps a copy of the private store as it is now, then deletes the clinic (its patients' side is nullified in
    /// the live private store, not in the copy). Returns the copy's path: its three references now dangle.
    func privateCopyBeforeTheClinicIsDeleted() throws -> String {
        let copy = scratch.file("private-before.eglog")
        try FileManager.default.copyItem(atPath: privatePath, toPath: copy)
        let container = try Self.open(scratch)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        for clinic in try context.fetch(FetchDescriptor<Clinic>()) { context.delete(clinic) }
        try context.save()
        return copy
    }
}

@Suite("egctl and references between stores")
struct EgctlForeignReferenceTests {
    @Test func inspectListsTheOtherStoreAndHowManyReferencesPointAtIt() throws {
        let hospital = try Hospital()
        for (path, other) in [(hospital.privatePath, hospital.publicUUID), (hospital.publicPath, hospital.privateUUID)]
        {
            let json = try Egctl.run("inspect", path, "--json").json()
            let stores = try #require(json["foreignStores"] as? [[String: Any]])
            #expect(stores.count == 1)
            #expect(stores.first?["storeUUID"] as? String == other.uuidString)
            #expect(stores.first?["referenceCount"] as? Int == 3)
            let text = try Egctl.run("inspect", path).stdout
            #expect(text.contains("other stores 1"), "\(text)")
            #expect(text.contains("\(other.uuidString): 3 references"), "\(text)")
        }
    }

    @Test func inspectOfAStoreOnItsOwnListsNoOtherStore() throws {
        let scratch = Scratch()
        let path = scratch.file("alone.eglog")
        let container = try ModelContainer(path: path, model: Hospital.model)
        let context = container.newBackgroundContext()
        context.insert(Clinic())
        try context.save()
        try container.close()
        let json = try Egctl.run("inspect", path, "--json").json()
        #expect((json["foreignStores"] as? [Any])?.isEmpty == true)
        #expect(try Egctl.run("inspect", path).stdout.contains("other stores none"))
    }

    @Test func verifyOfTheStoresTogetherChecksEveryReferenceBetweenThem() throws {
        let hospital = try Hospital()
        let result = try Egctl.run("verify", hospital.privatePath, hospital.publicPath, "--json")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let json = try result.json()
        #expect(json["intact"] as? Bool == true)
        #expect((json["stores"] as? [Any])?.count == 2)
        let references = try #require(json["foreignReferences"] as? [String: Any])
        #expect(references["checked"] as? Int == 6, "three patients → clinic, the clinic → three patients")
        #expect((references["dangling"] as? [Any])?.isEmpty == true)
        #expect((references["inverseMismatches"] as? [Any])?.isEmpty == true)
        let text = try Egctl.run("verify", hospital.privatePath, hospital.publicPath)
        #expect(text.status == 0)
        #expect(text.stdout.contains("references   6 between the stores checked, 0 dangling"), "\(text.stdout)")
    }

    @Test func verifyReportsDanglingReferencesWithTheirObjectsAndExitsOne() throws {
        let hospital = try Hospital()
        let stale = try hospital.privateCopyBeforeTheClinicIsDeleted()
        #expect(try Egctl.run("verify", hospital.privatePath, hospital.publicPath).status == 0)

        let result = try Egctl.run("verify", stale, hospital.publicPath, "--json")
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let json = try result.json()
        #expect(json["intact"] as? Bool == false)
        let references = try #require(json["foreignReferences"] as? [String: Any])
        let dangling = try #require(references["dangling"] as? [[String: Any]])
        #expect(dangling.count == 3)
        for entry in dangling {
            #expect(entry["relationship"] as? String == "clinic")
            #expect(entry["store"] as? String == hospital.privateUUID.uuidString)
            #expect(entry["targetStore"] as? String == hospital.publicUUID.uuidString)
            #expect((entry["object"] as? String)?.contains("/Patient/") == true)
            #expect((entry["target"] as? String)?.contains("\(hospital.publicUUID.uuidString)/Clinic/") == true)
        }
        let text = try Egctl.run("verify", stale, hospital.publicPath)
        #expect(text.status == 1)
        #expect(text.stdout.contains("3 dangling"), "\(text.stdout)")
        #expect(text.stdout.contains("dangling     Patient #"), "\(text.stdout)")
        #expect(text.stdout.contains(".clinic → missing Clinic #"), "\(text.stdout)")
    }

    /// A copy of the public store from before the clinic was deleted still lists its patients, whose live side no
    /// longer names the clinic.
    @Test func verifyReportsReferencesWhoseInverseDoesNotPointBack() throws {
        let hospital = try Hospital()
        let stalePublic = hospital.scratch.file("public-before.eglog")
        try FileManager.default.copyItem(atPath: hospital.publicPath, toPath: stalePublic)
        _ = try hospital.privateCopyBeforeTheClinicIsDeleted()

        let result = try Egctl.run("verify", hospital.privatePath, stalePublic, "--json")
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let references = try #require(try result.json()["foreignReferences"] as? [String: Any])
        #expect((references["dangling"] as? [Any])?.isEmpty == true)
        let mismatches = try #require(references["inverseMismatches"] as? [[String: Any]])
        #expect(mismatches.count == 3)
        #expect(mismatches.allSatisfy { $0["relationship"] as? String == "patients" })
        #expect(mismatches.allSatisfy { $0["store"] as? String == hospital.publicUUID.uuidString })
        let text = try Egctl.run("verify", hospital.privatePath, stalePublic).stdout
        #expect(text.contains("inverses     3 do not point back"), "\(text)")
        #expect(text.contains(", but its clinic does not point back"), "\(text)")
    }

    @Test func referencesIntoAStoreNotGivenAreCountedNotChecked() throws {
        let hospital = try Hospital()
        let stale = try hospital.privateCopyBeforeTheClinicIsDeleted()
        let result = try Egctl.run("verify", stale, "--json")
        #expect(result.status == 0, "one store alone: its references into others are not checked")
        let text = try Egctl.run("verify", hospital.publicPath, hospital.scratch.file("missing.eglog"))
        #expect(text.status == 2, "\(text.stderr)")
    }

    @Test func verifyRefusesOneStoreGivenTwice() throws {
        let hospital = try Hospital()
        let copy = hospital.scratch.file("public-copy.eglog")
        try FileManager.default.copyItem(atPath: hospital.publicPath, toPath: copy)
        let result = try Egctl.run("verify", hospital.publicPath, copy)
        #expect(result.status == 2)
        #expect(result.stderr.contains("are the same store"), "\(result.stderr)")
    }

    @Test func dumpShowsForeignReferencesWithTheirStore() throws {
        let hospital = try Hospital()
        let text = try Egctl.run("dump", hospital.privatePath, "--entity", "Patient")
        #expect(text.status == 0, "\(text.stderr)")
        let clinicLines = text.stdout.split(separator: "\n").filter { $0.contains("clinic = ") }
        #expect(clinicLines.count == 3)
        for line in clinicLines {
            #expect(line.hasSuffix("(in store \(hospital.publicUUID.uuidString))"), "\(line)")
        }
        let json = try Egctl.run("dump", hospital.publicPath, "--entity", "Clinic", "--format", "json")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let foreign = try #require(rows.first?["foreignReferences"] as? [[String: Any]])
        #expect(foreign.count == 3)
        #expect(foreign.allSatisfy { $0["store"] as? String == hospital.privateUUID.uuidString })
        #expect(foreign.allSatisfy { $0["relationship"] as? String == "patients" })
    }
}
