import EventGraph
import Foundation
import TestSupport

/// One acknowledged-or-not save of one writer: the `sequence`-th entry of writer `writer`.
///
/// Each save inserts the next entry, links it to the previous one (a to-one pair with an inverse, so the save also
/// updates the previous entry) and moves the writer's ``Tally`` forward: three objects in one transaction, which
/// recovery must keep or drop together.
final class Entry: ManagedObject {
    @Attribute(.unique) var key: Int64 = 0
    @Attribute var writer: Int32 = 0
    @Attribute var sequence: Int64 = 0
    @Attribute var text: String = ""
    @Attribute(.externalStorage(threshold: 4096)) var payload: Data? = nil
    @Relationship(inverse: "next") var previous: Entry?
    @Relationship var next: Entry?
}

/// A writer's last saved sequence, updated in the same transaction as its entry.
final class Tally: ManagedObject {
    @Attribute(.unique) var writer: Int32 = 0
    @Attribute var lastSequence: Int64 = 0
}

/// The model both the saver and the driver open the store with, and the values every entry must hold.
enum Ledger {
    static let model = try! ObjectModel(name: "KillNine", version: "1", types: [Entry.self, Tally.self])

    /// The unique key of a writer's entry.
    static func key(writer: Int32, sequence: Int64) -> Int64 { Int64(writer) << 40 | sequence }

    /// The text of an entry: a function of writer and sequence only, so that the driver can check entries that
    /// were saved but never acknowledged too. Lengths cross the 256-byte compression threshold.
    static func text(writer: Int32, sequence: Int64) -> String {
        var random = SeededGenerator(seed: UInt64(bitPattern: key(writer: writer, sequence: sequence)))
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz ".utf8)
        let length = Int.random(in: 0..<700, using: &random)
        let letters = (0..<length).map { _ in alphabet.randomElement(using: &random)! }
        return "w\(writer)s\(sequence):" + String(decoding: letters, as: UTF8.self)
    }

    /// Every 37th entry carries a binary value above the external-storage threshold (a blob frame in the log).
    static func payload(writer: Int32, sequence: Int64) -> Data? {
        guard sequence % 37 == 0 else { return nil }
        var random = SeededGenerator(seed: UInt64(bitPattern: key(writer: writer, sequence: sequence)) ^ 0xB10B)
        let count = Int.random(in: 4096..<20_480, using: &random)
        return Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &random) })
    }

    /// A short fingerprint of an entry's values, printed with each acknowledgement and compared after recovery.
    static func fingerprint(text: String, payload: Data?) -> UInt64 {
        var state: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 { state = (state ^ UInt64(byte)) &* 0x100_0000_01B3 }
        state = (state ^ 0xFF) &* 0x100_0000_01B3
        for byte in payload ?? Data() { state = (state ^ UInt64(byte)) &* 0x100_0000_01B3 }
        return state ^ UInt64(payload?.count ?? 0)
    }

    /// The expected fingerprint of an entry.
    static func fingerprint(writer: Int32, sequence: Int64) -> UInt64 {
        fingerprint(
            text: text(writer: writer, sequence: sequence), payload: payload(writer: writer, sequence: sequence))
    }

}
