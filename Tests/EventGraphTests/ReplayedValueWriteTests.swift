import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A replayed changeset keeps its values by column kind (bit patterns, bytes, targets in one array) and writes them
/// into the columns without a ``PropertyValue``: what it writes must be what ``Column/set(_:at:)-(PropertyValue?,_)``
/// writes with the decoded value.
@Suite("A replayed changeset's values, written by kind, write what their PropertyValues write")
struct ReplayedValueWriteTests {
    static let values: [PropertyValue] =
        PreparedColumnValueTests.values.compactMap { $0 } + [
            .attribute(.blob(BlobReference(transactionID: 3, index: 1, byteCount: 9))),
            .attribute(.string(String(repeating: "ascii ", count: 20))), .attribute(.decimal("1.25")),
            .attribute(.transformable([0xFF, 0x00])), .attribute(.double(.nan)), .attribute(.int64(-1)),
        ]

    /// `value` as a decoded log payload gives it: an update of one object, encoded and decoded flat.
    static func decoded(_ value: PropertyValue) throws -> ReplayChangeset {
        let changeset = Changeset(
            transactionID: 1, commitTimeMicroseconds: 0, author: "", nextKey: 100,
            operations: [
                .update(ObjectReference(entityIndex: 0, key: 1), [PropertyChange(propertyIndex: 0, value: value)])
            ]
        )
        let transaction = TransactionRecord(
            transactionID: 1, payload: try changeset.encoded(), blobs: [], byteOffset: 0)
        return try ReplayChangeset(transaction)
    }

    @Test("every value over every old value of a slot, new slots and rewritten ones")
    func sameAsPropertyValues() throws {
        for value in Self.values {
            let flat = try Self.decoded(value)
            let written = try #require(flat.values.first)
            #expect(flat.values.count == 1)
            #expect(flat.materialized(written) == value || "\(flat.materialized(written))" == "\(value)")
            for old in PreparedColumnValueTests.values {
                var plain = Column()
                // Slots 0 and 1 hold something first; slot 1 gets the value, slot 2 is new.
                for slot in 0..<2 { plain.set(old, at: slot) }
                var byKind = plain
                plain.set(value, at: 1)
                flat.write(written, into: &byKind, at: 1)
                plain.set(value, at: 2)
                flat.write(written, into: &byKind, at: 2)
                for slot in 0..<3 {
                    #expect(
                        plain.tag(at: slot) == byKind.tag(at: slot)
                            && "\(String(describing: plain.value(at: slot)))"
                                == "\(String(describing: byKind.value(at: slot)))",
                        "\(value) over \(String(describing: old)), slot \(slot)")
                }
                #expect(plain.arena.isASCII == byKind.arena.isASCII, "\(value) over \(String(describing: old))")
            }
        }
    }

    @Test("values are kept by kind: bit patterns, bytes with their ASCII bit, targets in one array")
    func keptByKind() throws {
        let targets = Array(PreparedColumnValueTests.references.prefix(3))
        let changeset = Changeset(
            transactionID: 1, commitTimeMicroseconds: 0, author: "", nextKey: 100,
            operations: [
                .insert(
                    ObjectReference(entityIndex: 0, key: 1),
                    [
                        PropertyChange(propertyIndex: 0, value: .attribute(.int64(-7))),
                        PropertyChange(propertyIndex: 1, value: .toOne(targets[0])),
                        PropertyChange(propertyIndex: 2, value: .toMany(targets)),
                        PropertyChange(propertyIndex: 3, value: .attribute(.string("plain"))),
                        PropertyChange(propertyIndex: 4, value: .attribute(.string("héllo"))),
                    ])
            ])
        let flat = try ReplayChangeset(
            TransactionRecord(transactionID: 1, payload: try changeset.encoded(), blobs: [], byteOffset: 0))
        #expect(flat.changeset == changeset)
        #expect(flat.others.isEmpty)
        #expect(flat.targets == [targets[0]] + targets)
        #expect(flat.values.map(\.tag) == [.int64, .toOne, .toMany, .string, .string])
        #expect(flat.values[0].word == UInt64(bitPattern: -7))
        #expect(flat.values[3].isASCII && !flat.values[4].isASCII)
    }
}
